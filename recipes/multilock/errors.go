package multilock

import (
	"errors"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locking"
)

// Errors, matched with errors.Is: the locking package's sentinels, the
// framework's for bad input, and the multi-lock's own.
var (
	// ErrNotHeld is returned by Release when nothing is held, and by Err
	// when nothing is held.
	ErrNotHeld = locking.ErrNotHeld
	// ErrLockLost is wrapped by Err (and Release) once a member's hold was
	// lost with the connection, per the client's ErrorPolicy.
	ErrLockLost = locking.ErrLockLost
	// ErrInvalidMembers is returned by every call of a multi-lock made with
	// no member, a zero Member, or two members that would wait for each
	// other (two locks on one path other than the write and read lock of
	// one RWLock, or leases).
	ErrInvalidMembers = errors.New("curator: invalid multi-lock members")
	// ErrNilClient is returned when the multi-lock was made with a nil
	// client.
	ErrNilClient = framework.ErrNilClient
	// ErrNilHandle is returned by the acquires of a nil *MultiLock; its
	// Release returns ErrNotHeld, Err ErrNotHeld and Done a closed
	// channel (see framework.ErrNilHandle).
	ErrNilHandle = framework.ErrNilHandle
	// ErrLayoutMismatch is wrapped by an acquire whose member refused its
	// path because another recipe's layout is at work there (see each
	// member's package); the members taken before it are released.
	ErrLayoutMismatch = framework.ErrLayoutMismatch
)
