package locking

import "errors"

// Errors shared by every lock recipe, matched with errors.Is. Recipe packages
// re-export them; a bad path is framework.ErrInvalidPath, and errors of one
// recipe (rwlock's ErrUpgradeNotSupported) live in that recipe.
var (
	// ErrNotHeld is returned by Release when nothing is held, and by Err
	// when the last hold was released.
	ErrNotHeld = errors.New("curator: lock not held")
	// ErrLockLost is returned by Err once a hold ended because of the
	// connection (per the client's ErrorPolicy), and by Release after that;
	// Acquire wraps it when its node kept vanishing while it waited. A held
	// node deleted by an operator is not watched for (that would cost a
	// server watch per holder): guard writes with the hold's CheckOp.
	ErrLockLost = errors.New("curator: lock lost")
	// ErrWouldBlock is how a driver's Begin (AttemptDriver) or Layout
	// check says, for a try, that the lock is busy; the loop's TryAcquire
	// reports that as false, with no node left behind, and so do the
	// recipes' (busy is not an error).
	ErrWouldBlock = errors.New("curator: lock is held by others")
)
