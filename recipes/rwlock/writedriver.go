package rwlock

import (
	"fmt"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locking"
)

// writeDriver is the write lock's driver of the shared loop: our node holds
// iff it is first among all read and write nodes.
type writeDriver struct {
	data []byte // nil: the client's default data
}

// Node returns an EPHEMERAL_SEQUENTIAL node named "__WRIT__".
func (d writeDriver) Node() locking.NodeSpec {
	return locking.NodeSpec{Name: writeName, Mode: framework.EphemeralSequential, Data: d.data}
}

// Sequence recognises read and write nodes alike.
func (writeDriver) Sequence(child string) (int32, bool) { return sequence(child) }

// GetsTheLock holds iff own is first; otherwise it watches the node just
// ahead. Its deletion grants the lock without listing again only when it is
// a read node at index 0: a write node's owner may downgrade, creating a read
// node with the write node's sequence number before deleting the write node,
// so the deletion of a first write node does not prove we are first now.
// A first read node cannot be joined by such a node: that would need a held
// write node ahead of it.
func (writeDriver) GetsTheLock(l locking.Listing) (locking.Verdict, error) {
	sorted, own := l.Sorted, l.Own
	i := indexOf(sorted, own)
	if i < 0 {
		return locking.Verdict{}, fmt.Errorf("%w: own node %s is not among the participants", ErrLockLost, own)
	}
	if i == 0 {
		return locking.Verdict{Held: true}, nil
	}
	pred := sorted[i-1]
	s, _, _ := parseChild(pred)
	return locking.Verdict{Watch: pred, HeldWhenGone: i == 1 && s == readSide}, nil
}
