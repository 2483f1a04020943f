package locking

import (
	"fmt"

	"github.com/gocurator/curator/framework"
)

// NodeSpec says how a participant's node is created: the loop creates
// "<path>/_c_<uuid>-<Name>" in Mode (the server appends the sequence number
// for sequential modes) with Data (nil: the client's default data).
type NodeSpec struct {
	Name string
	Mode framework.Mode
	Data []byte
}

// Verdict is a driver's answer for one listing.
type Verdict struct {
	// Held is true when our node holds the lock.
	Held bool
	// Watch is the child to watch when not Held: its change is the only
	// thing that can let our node hold.
	Watch string
	// HeldWhenGone claims that our node holds the lock as soon as Watch is
	// deleted, without listing again: no node that would stop us can appear
	// ahead of ours before then (sequence numbers only grow, but see
	// rwlock's downgrade, which creates a node with an old sequence
	// number). The loop grants on Watch's deletion only if, besides, the
	// driver says Held for the listing without Watch (see the package
	// documentation's driver contract).
	HeldWhenGone bool
}

// Driver is what a lock recipe plugs into the loop. A driver may also be a
// DirDriver (its nodes in a sub-directory, decided on the whole directory
// and waited for on a children watch) and an AttemptDriver (work around
// each node, such as the V2 semaphore's gate).
type Driver interface {
	// Node says how to create our node. It is called for every create, so
	// a recipe may choose per attempt (rwlock's downgrade does).
	Node() NodeSpec
	// Sequence returns the sort key of a child; ok is false for children
	// that are not participants of this recipe, which are ignored.
	Sequence(child string) (seq int32, ok bool)
	// GetsTheLock decides whether own (a name in sorted) holds the lock,
	// given the participants in sequence order up to and including own
	// (every child, for a layout with AllChildren) and the number of
	// holders allowed. It is called once per listing and, when own does not hold,
	// once more without the node it named: it must be monotone (see the
	// package documentation's driver contract).
	GetsTheLock(sorted []string, own string, maxLeases int) (Verdict, error)
}

// StandardDriver is the driver of the mutex and of the V1 semaphore
// (Curator's StandardLockInternalsDriver): our node holds iff fewer than
// maxLeases nodes sort before it; otherwise it watches the node maxLeases
// places ahead.
type StandardDriver struct {
	// LockName is the name nodes carry, such as "lock-".
	LockName string
	// Data is written into nodes; nil for the client's default data.
	Data []byte
}

// Node returns an EPHEMERAL_SEQUENTIAL node named LockName.
func (d StandardDriver) Node() NodeSpec {
	return NodeSpec{Name: d.LockName, Mode: framework.EphemeralSequential, Data: d.Data}
}

// Sequence reads the number after LockName.
func (d StandardDriver) Sequence(child string) (int32, bool) { return Sequence(child, d.LockName) }

// GetsTheLock holds iff own's index is below maxLeases.
func (d StandardDriver) GetsTheLock(sorted []string, own string, maxLeases int) (Verdict, error) {
	i := indexOf(sorted, own)
	if i < 0 {
		return Verdict{}, fmt.Errorf("%w: own node %s is not among the participants", ErrLockLost, own)
	}
	if maxLeases < 1 {
		return Verdict{}, fmt.Errorf("curator: max leases %d must be at least 1", maxLeases)
	}
	if i < maxLeases {
		return Verdict{Held: true}, nil
	}
	// Nodes only ever join behind ours, so once the node maxLeases places
	// ahead is gone and it was the first, fewer than maxLeases remain ahead.
	return Verdict{Watch: sorted[i-maxLeases], HeldWhenGone: i == maxLeases}, nil
}
