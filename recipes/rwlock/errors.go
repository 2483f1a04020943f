package rwlock

import (
	"errors"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locking"
)

// Errors, matched with errors.Is: the locking package's sentinels, and
// framework's for a bad path.
var (
	ErrNotHeld     = locking.ErrNotHeld
	ErrLockLost    = locking.ErrLockLost
	ErrInvalidPath = framework.ErrInvalidPath
	ErrNilClient   = framework.ErrNilClient
	// ErrUpgradeNotSupported is returned at once when the write lock is
	// asked for by an RWLock that holds only its read lock (Curator
	// deadlocks there).
	ErrUpgradeNotSupported = errors.New("curator: upgrading a read lock to a write lock is not supported")
	ErrNilHandle           = framework.ErrNilHandle
	// ErrLayoutMismatch is returned by an acquire (read or write) on a
	// path that holds another recipe's nodes: a mutex's, V1
	// semaphore's or LeaderSelector's ("lock-"), a leader latch's
	// ("latch-"), or a semaphore's leases in "<path>/leases". Each ignores the other's nodes, so neither would
	// exclude the other's holders; the acquire fails instead, leaves no
	// node, and the error names the node found.
	ErrLayoutMismatch = framework.ErrLayoutMismatch
)
