package rwlock

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locking"
)

// errDowngradeRaced means a downgrade read node was made with the sequence
// number of our write node, but the write node was gone by the time we
// looked: a writer queued behind it may hold the lock already, so the read
// node must not be trusted. The read handle deletes it (the loop does) and
// acquires again with an ordinary read node.
var errDowngradeRaced = errors.New("write lock released while downgrading")

// readDriver is the read lock's driver of the shared loop: our node holds
// iff no write node sorts strictly before it, not counting the write node
// this RWLock holds (Curator: "or this owner holds the write lock").
type readDriver struct {
	data []byte // nil: the client's default data
	// ownWrite returns the name of the write node this RWLock holds, or ""
	// when it holds none.
	ownWrite func() string

	mu sync.Mutex
	// downgrade is set, with downgradeSeq, when the last Node made a
	// downgrade node. Read acquires of one handle run one at a time, so
	// Node and the GetsTheLock calls that follow it belong together.
	downgrade    bool
	downgradeSeq int32
	// gone is set, with goneSeq, once a downgrade found its write node
	// missing: that node never comes back, so Node must not downgrade from
	// it again (its hold may not know yet, or ever if an operator deleted
	// the node), or the acquire would go round forever.
	gone    bool
	goneSeq int32
}

// Node returns an EPHEMERAL_SEQUENTIAL node named "__READ__", unless this
// RWLock holds the write lock: then the node is a plain EPHEMERAL one named
// "__READ__" plus the write node's sequence number (Curator 5.5+), so that it
// sorts where the write node is and a writer queued behind cannot slip in
// when the write lock is released (CURATOR-621).
func (d *readDriver) Node() locking.NodeSpec {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.downgrade = false
	if w := d.ownWrite(); w != "" {
		if _, seq, ok := parseChild(w); ok && !(d.gone && seq == d.goneSeq) {
			d.downgrade, d.downgradeSeq = true, seq
			return locking.NodeSpec{Name: fmt.Sprintf("%s%010d", readName, seq), Mode: framework.Ephemeral, Data: d.data}
		}
	}
	return locking.NodeSpec{Name: readName, Mode: framework.EphemeralSequential, Data: d.data}
}

// Sequence recognises read and write nodes alike.
func (*readDriver) Sequence(child string) (int32, bool) { return sequence(child) }

// GetsTheLock holds iff no write node sorts strictly before own, other than
// the write node this RWLock holds. A write node with own's sequence number
// is the write node own was downgraded from and never blocks.
//
// Otherwise it watches the nearest blocking write node ahead, not the
// earliest: when a writer releases, only the readers between it and the
// next writer are woken; readers behind a later writer keep sleeping on that
// one. The deletion grants the lock without listing again when the watched
// node is the only blocking write node ahead: write nodes only ever join
// behind ours.
//
// A downgrade node is trusted only while the write node it was made from is
// listed: then no writer queued behind that write node can have been
// granted the lock before our node existed.
func (d *readDriver) GetsTheLock(l locking.Listing) (locking.Verdict, error) {
	sorted, own := l.Sorted, l.Own
	if indexOf(sorted, own) < 0 {
		return locking.Verdict{}, fmt.Errorf("%w: own node %s is not among the participants", ErrLockLost, own)
	}
	_, ownSeq, ok := parseChild(own)
	if !ok {
		return locking.Verdict{}, fmt.Errorf("%w: own node %s is not a read node", ErrLockLost, own)
	}
	ownWrite := d.ownWrite()
	var (
		parent   bool // the write node own was downgraded from is listed
		nearest  = -1
		blocking int
	)
	for i, c := range sorted {
		s, seq, _ := parseChild(c)
		switch {
		case s != writeSide:
		case seq == ownSeq:
			parent = true
		case !locking.Before(seq, ownSeq), c == ownWrite:
		default:
			nearest = i
			blocking++
		}
	}
	d.mu.Lock()
	raced := d.downgrade && d.downgradeSeq == ownSeq && !parent
	if raced {
		d.gone, d.goneSeq = true, ownSeq
	}
	d.mu.Unlock()
	if raced {
		return locking.Verdict{}, errDowngradeRaced
	}
	if blocking == 0 {
		return locking.Verdict{Held: true}, nil
	}
	return locking.Verdict{Watch: sorted[nearest], HeldWhenGone: blocking == 1}, nil
}
