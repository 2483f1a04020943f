package semaphore

import (
	"errors"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locking"
)

// Errors, matched with errors.Is. ErrNotHeld, ErrLockLost, ErrInvalidPath
// and ErrNilClient are the sentinels of locking and framework, shared by every
// recipe.
var (
	// ErrLayoutMismatch is returned when the path holds the other
	// layout at work: a V1 semaphore found a lease in "leases" (Curator's
	// V2 or ours; an empty directory or a gate node in "locks" does not
	// count), or a V2 semaphore found a V1 participant (its trace in
	// "leases", or its node under the path). The two count leases
	// differently, so sharing a path would admit too many holders; the
	// acquire fails instead and leaves no node (a refused acquire also
	// removes the directories it left empty). The error names the node
	// found.
	ErrLayoutMismatch = framework.ErrLayoutMismatch
	// ErrInvalidMaxLeases is returned for a maximum below 1, or a nil
	// count given to WithMaxLeasesFrom.
	ErrInvalidMaxLeases = errors.New("curator: invalid max leases")
	// ErrInvalidLeaseCount is returned by AcquireN for n below 1 or above
	// the maximum.
	ErrInvalidLeaseCount = errors.New("curator: invalid number of leases")

	// ErrNotHeld is returned by Release of a lease released already, and
	// by Err once a lease was released.
	ErrNotHeld = locking.ErrNotHeld
	// ErrLockLost is returned by Err once a lease was lost with the
	// connection (per the client's ErrorPolicy), and by Release after that.
	ErrLockLost = locking.ErrLockLost
	// ErrInvalidPath is returned for a path ZooKeeper would reject, or the
	// root.
	ErrInvalidPath = framework.ErrInvalidPath
	// ErrNilClient is returned when the semaphore was made with a nil
	// client.
	ErrNilClient = framework.ErrNilClient
	// ErrNilHandle is returned by the calls of a nil *Semaphore or nil
	// *Mutex that would act on the semaphore (see framework.ErrNilHandle).
	ErrNilHandle = framework.ErrNilHandle
)
