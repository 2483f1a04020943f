package atomic

import (
	"errors"

	"github.com/gocurator/curator/framework"
)

// Errors, matched with errors.Is.
var (
	// ErrNotApplied is returned by Long.Add and Int.Add when the update did
	// not happen: every try met a concurrent write (or, promoted, the lock
	// could not be had in time). The value is unchanged by the call.
	ErrNotApplied = errors.New("curator: atomic update not applied")
	// ErrMalformed is returned when the node holds fewer bytes than the
	// number (8 for a Long, 4 for an Int): Curator's corruption error.
	ErrMalformed = errors.New("curator: atomic node data is too short for the number")
	// ErrUnknownOutcome is returned when a write may or may not have been
	// applied and nothing can tell: it was in flight as the session
	// expired (the stamp that would tell went with the session), or its
	// reply was lost on a value node that takes no writer child (see the
	// package documentation). The value was not changed twice.
	ErrUnknownOutcome = errors.New("curator: atomic write outcome unknown")
	// ErrClosed is returned by the calls of a handle after its Close, and
	// by calls that were waiting for their turn when Close ran.
	ErrClosed = errors.New("curator: atomic handle closed")
	// ErrNilClient is framework.ErrNilClient: the handle was made with a
	// nil client.
	ErrNilClient = framework.ErrNilClient
	// ErrInvalidPath is framework.ErrInvalidPath: the path (or the lock
	// path) is not one ZooKeeper accepts, or is the root.
	ErrInvalidPath = framework.ErrInvalidPath
	// ErrNilHandle is framework.ErrNilHandle, returned by the calls of a
	// nil handle.
	ErrNilHandle = framework.ErrNilHandle
	// ErrLayoutMismatch is framework.ErrLayoutMismatch: the node holds
	// another kind's value (a Long found the 4 bytes of an Int or a
	// SharedCount, an Int the 8 bytes of a Long).
	ErrLayoutMismatch = framework.ErrLayoutMismatch
)
