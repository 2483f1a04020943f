package rwlock

import "github.com/gocurator/curator/recipes/locking"

// Errors, matched with errors.Is; they are the locking package's sentinels.
var (
	ErrNotHeld             = locking.ErrNotHeld
	ErrLockLost            = locking.ErrLockLost
	ErrInvalidPath         = locking.ErrInvalidPath
	ErrNilClient           = locking.ErrNilClient
	ErrUpgradeNotSupported = locking.ErrUpgradeNotSupported
	ErrNilHandle           = locking.ErrNilHandle
)
