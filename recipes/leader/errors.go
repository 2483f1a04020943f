package leader

import (
	"errors"
	"fmt"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locking"
)

// Errors of the package, matched with errors.Is.
var (
	// ErrNoLeader is returned by Leader when nobody leads: the election
	// has no readable participant.
	ErrNoLeader = errors.New("curator: no leader")
	// ErrLeadershipLost is matched by a Term's Err once the term ended for
	// any reason but Resign and Close; the error also matches the reason
	// (ErrSuspended, ErrSessionLost, ErrNodeDeleted) and locking.ErrLockLost.
	ErrLeadershipLost = fmt.Errorf("curator: leadership lost: %w", locking.ErrLockLost)
	// ErrSuspended says a term ended because the connection was suspended
	// while the election's ErrorPolicy counts Suspended as an error (the
	// standard policy): the session may be alive, but we cannot know that
	// nobody else leads.
	ErrSuspended = errors.New("curator: connection suspended")
	// ErrSessionLost says a term ended, or a Campaign failed, because the
	// session our node lived in ended (expired, or declared expired by the
	// client after Suspended for the session timeout).
	ErrSessionLost = errors.New("curator: session lost")
	// ErrNodeDeleted says a term ended because our node was deleted by
	// someone else (an operator, or the election path deleted recursively).
	ErrNodeDeleted = errors.New("curator: leader node deleted")
	// ErrResigned is a Term's Err after Resign.
	ErrResigned = errors.New("curator: resigned")
	// ErrNotLeader is locking.ErrNotHeld: returned by a second Resign, and
	// by the calls of a nil *Term.
	ErrNotLeader = locking.ErrNotHeld
	// ErrNilHandle is framework.ErrNilHandle, returned by the calls of a nil
	// *Election that would act on the election.
	ErrNilHandle = framework.ErrNilHandle
	// ErrNilClient is framework.ErrNilClient: New was given a nil client.
	ErrNilClient = framework.ErrNilClient
	// ErrInvalidPath is framework.ErrInvalidPath.
	ErrInvalidPath = framework.ErrInvalidPath
	// ErrLayoutMismatch is framework.ErrLayoutMismatch: the election's
	// path holds another layout's nodes (a LeaderLatch's "latch-" beside
	// a LeaderSelector's, or any InterProcessMutex's, "lock-"; or a
	// read/write lock's "__READ__", "__WRIT__"). Campaign,
	// Run, Start's Latch, Leader and Participants refuse such a path; the
	// error names a node found. A refused Campaign leaves no node.
	ErrLayoutMismatch = framework.ErrLayoutMismatch
)

// lost returns the Err of a term that ended for reason.
func lost(reason error) error { return fmt.Errorf("%w: %w", ErrLeadershipLost, reason) }
