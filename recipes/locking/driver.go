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

// Listing is one look at the lock's directory: what a driver decides on.
type Listing struct {
	// Sorted is the participants in sequence order up to and including
	// Own (with the layout's AllChildren: every participant, then the
	// children Sequence refuses, in the server's order).
	Sorted []string
	// Own is our node's name, one of Sorted.
	Own string
	// Limit is how many holders the lock allows at this look: the limit
	// of WithLimit, 1 by default. Drivers without a count ignore it.
	Limit int
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
	// GetsTheLock decides whether l.Own holds the lock. It is called once
	// per listing and, when Own does not hold, once more without the node
	// it named: it must be monotone (see the package documentation's
	// driver contract).
	GetsTheLock(l Listing) (Verdict, error)
}

// StandardDriver is the driver of the mutex and of the V1 semaphore
// (Curator's StandardLockInternalsDriver): our node holds iff fewer than
// Listing.Limit nodes sort before it; otherwise it watches the node Limit
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

// GetsTheLock holds iff Own's index is below Limit.
func (d StandardDriver) GetsTheLock(l Listing) (Verdict, error) {
	i := indexOf(l.Sorted, l.Own)
	if i < 0 {
		return Verdict{}, fmt.Errorf("%w: own node %s is not among the participants", ErrLockLost, l.Own)
	}
	if l.Limit < 1 {
		return Verdict{}, fmt.Errorf("curator: limit %d must be at least 1", l.Limit)
	}
	if i < l.Limit {
		return Verdict{Held: true}, nil
	}
	// Nodes only ever join behind ours, so once the node Limit places
	// ahead is gone and it was the first, fewer than Limit remain ahead.
	return Verdict{Watch: l.Sorted[i-l.Limit], HeldWhenGone: i == l.Limit}, nil
}
