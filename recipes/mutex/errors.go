package mutex

import (
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
	ErrNilHandle   = framework.ErrNilHandle
	// ErrLayoutMismatch is returned by an acquire on a path that holds
	// another recipe's nodes: a read/write lock's ("__READ__",
	// "__WRIT__"), a leader latch's ("latch-"), or a semaphore's leases in
	// "<path>/leases". Each
	// ignores the other's nodes, so neither would exclude the other's
	// holders; the acquire fails instead, leaves no node, and the error
	// names the node found.
	ErrLayoutMismatch = framework.ErrLayoutMismatch
)
