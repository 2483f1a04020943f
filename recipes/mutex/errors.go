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
)
