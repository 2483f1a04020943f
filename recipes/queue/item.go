package queue

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/gocurator/curator/framework"
)

// Item is one item handed to a consume function.
type Item struct {
	// Data is the item as it was put.
	Data []byte
	// Name is the name of the item's node ("queue-0000000042").
	Name string
	// Index is the item's place in its node (0 for Put; 0..Count-1 for
	// the items of one PutMulti, delivered in order).
	Index int
	// Count is the number of items in the node.
	Count int
	// ID is the item's id in an IDQueue (as its name carries it: '/' and
	// '|' replaced with '_'); "" elsewhere.
	ID string
	// Priority is the item's priority in a PriorityQueue; 0 elsewhere.
	Priority int
	// Due is when a DelayQueue's item became deliverable (millisecond
	// precision); the zero Time elsewhere.
	Due time.Time

	f *fence
}

// fence is what a consumer in lock-safety mode holds on its item node: the
// lock node, and the item node's version after the consumer's lock
// transaction bumped it (so a later consumer's bump fences this one out).
type fence struct {
	ctx      context.Context // the item's context: ends when the lock may be lost
	itemPath string
	lockNode string
	version  int32 // the item node's version while we hold it
	strong   bool  // version was bumped by our lock transaction
	rest     [][]byte
	asked    atomic.Bool // RemoveOps was called
}

// Fenced reports whether CheckOp fences this consumer out once another
// consumer has taken the item: true in lock-safety mode (WithLockPath),
// except for an item too large to be rewritten in the lock transaction
// (within a few hundred bytes of jute.maxbuffer), which is locked as
// Curator does, without the version bump.
func (it Item) Fenced() bool { return it.f != nil && it.f.ctx != nil && it.f.strong }

// Done returns a channel closed when the consumer must stop working on the
// item: in lock-safety mode when its lock may be lost (the client's
// ErrorPolicy counts a state as an error, the session ended, the client
// closed), and in every mode when Consume's context ends or the Queue is
// closed. It is the consume function's ctx.Done.
func (it Item) Done() <-chan struct{} {
	if it.f == nil || it.f.ctx == nil {
		return nil
	}
	return it.f.ctx.Done()
}

// Err says why Done closed: ErrItemLost (the lock may be another's now),
// ErrClosed, or the context's error; nil while the item is ours.
func (it Item) Err() error {
	if it.f == nil || it.f.ctx == nil || it.f.ctx.Err() == nil {
		return nil
	}
	return context.Cause(it.f.ctx)
}

// CheckOp returns an operation that fails (zk.ErrBadVersion, zk.ErrNoNode)
// once this consumer no longer holds the item: put it in the transaction
// that records the item's work in ZooKeeper (Client.Multi), and the work is
// recorded only while the item is ours (CURATOR-605: Curator lets a second
// consumer process an item whose first consumer lost its session while the
// first still writes). In a queue without a lock path, where items are
// removed before they are delivered, it returns the zero Op, which a
// transaction refuses (Fenced is false).
func (it Item) CheckOp() framework.Op {
	if !it.Fenced() {
		return framework.Op{}
	}
	return framework.CheckOp(it.f.itemPath, it.f.version)
}

// RemoveOps returns the operations that consume this item in the caller's
// own transaction, fenced as CheckOp is: for a node's last item, the
// deletion of the item node and of its lock node; for an earlier item of a
// PutMulti node, the rewrite of the node without the items consumed so far.
// Running them with the consumer's own writes in one Multi makes the work
// and the consumption one atomic step (effectively once, for work recorded
// in ZooKeeper). The consumer notices after the function returns and does
// not remove the item again. nil when not Fenced.
func (it Item) RemoveOps() []framework.Op {
	if !it.Fenced() {
		return nil
	}
	f := it.f
	f.asked.Store(true)
	if it.Index >= it.Count-1 {
		return []framework.Op{
			framework.DeleteOp(f.itemPath, f.version),
			framework.DeleteOp(f.lockNode, -1),
		}
	}
	return []framework.Op{framework.SetOp(f.itemPath, encodeItems(f.rest[it.Index+1:]), f.version)}
}
