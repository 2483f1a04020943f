package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
)

// IDQueue is a Queue whose items carry an id, so that they can be removed
// before they are consumed: Curator's DistributedIdQueue, on its layout
// ("<path>/queue-|<id>|<seq>"). Items are taken in put order, as a Queue's.
// A failed consume requeues an item under its id (Item.ID). Ids need not
// be unique. It is safe for concurrent use, as a Queue is.
type IDQueue struct{ q *Queue }

// NewID returns a handle on the id queue at path; it does no I/O. Options
// and bad input are as New's.
func NewID(c *framework.Client, path string, opts ...Option) *IDQueue {
	q := New(c, path, opts...)
	q.v = idQueue
	return &IDQueue{q: q}
}

// Path returns the queue's path.
func (q *IDQueue) Path() string {
	if q == nil {
		return ""
	}
	return q.q.Path()
}

func (q *IDQueue) inner(ctx context.Context, verb string) (*Queue, error) {
	if q == nil {
		return nil, fmt.Errorf("queue: %s: %w", verb, ErrNilHandle)
	}
	return q.q, q.q.check(ctx, verb)
}

// PutID adds item at the tail of the queue under id, one node
// "queue-|<id>|<seq>" in which '/' and '|' of id read '_' (as Curator
// writes them; Item.ID and Remove see the id so). An empty id is refused
// with ErrInvalidOption. Otherwise as Queue.Put.
func (q *IDQueue) PutID(ctx context.Context, id string, item []byte) error {
	qq, err := q.inner(ctx, "put")
	if err != nil {
		return err
	}
	if id == "" {
		return qq.wrap("put", fmt.Errorf("%w: empty id", ErrInvalidOption))
	}
	return qq.wrap("put", qq.create(ctx, idPrefix(id), encodeItems([][]byte{item})))
}

// Remove deletes the items put under id that no consumer holds, and
// returns how many it deleted. In lock-safety mode an item being consumed
// is locked and stays (its consumer finishes it); an item taken meanwhile
// is not counted. id is compared as PutID writes it ('/' and '|' as '_';
// Curator compares the id as given, so it cannot remove such items). A
// missing queue holds nothing: 0, nil. On an error some items may have
// been deleted already; the count says how many.
func (q *IDQueue) Remove(ctx context.Context, id string) (int, error) {
	qq, err := q.inner(ctx, "remove")
	if err != nil {
		return 0, err
	}
	if id == "" {
		return 0, qq.wrap("remove", fmt.Errorf("%w: empty id", ErrInvalidOption))
	}
	children, _, err := qq.c.Children(ctx, qq.path)
	if errors.Is(err, zk.ErrNoNode) {
		return 0, nil
	}
	if err != nil {
		return 0, qq.wrap("remove", err)
	}
	want := fixID(id)
	n := 0
	for _, name := range qq.v.order(children) {
		if got, ok := itemID(name); !ok || got != want {
			continue
		}
		ok, err := qq.remove(ctx, name)
		if err != nil {
			return n, qq.wrap("remove", fmt.Errorf("item %s: %w", name, err))
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// remove deletes the item node name unless a consumer holds it; false
// when it is held or gone. In lock-safety mode the lock is taken, the item
// deleted and the lock deleted in one transaction, so a consumer's lock
// (Go's or Curator's) keeps the item and nothing is left behind.
func (q *Queue) remove(ctx context.Context, name string) (bool, error) {
	itemPath := framework.JoinPath(q.path, name)
	if q.opts.lockPath == "" {
		err := q.c.Delete(ctx, itemPath)
		if errors.Is(err, zk.ErrNoNode) {
			return false, nil
		}
		return err == nil, err
	}
	lockNode := framework.JoinPath(q.opts.lockPath, name)
	_, err := q.c.Multi(ctx,
		framework.CreateOp(lockNode, nil, framework.Ephemeral),
		framework.DeleteOp(itemPath, -1),
		framework.DeleteOp(lockNode, -1))
	switch {
	case err == nil:
		return true, nil
	case isOpErr(err, 0, zk.ErrNodeExists), isOpErr(err, 1, zk.ErrNoNode):
		return false, nil // held by a consumer, or taken
	case isOpErr(err, 0, zk.ErrNoNode):
		// No lock path yet: no consumer has ever locked an item.
		q.setEnsured(false)
		if err := q.ensure(ctx); err != nil {
			return false, err
		}
		return q.remove(ctx, name)
	}
	return false, err
}

// Consume is Queue.Consume; each Item has its ID.
func (q *IDQueue) Consume(ctx context.Context, fn func(ctx context.Context, it Item) error) error {
	if q == nil {
		return fmt.Errorf("queue: consume: %w", ErrNilHandle)
	}
	return q.q.Consume(ctx, fn)
}

// Close is Queue.Close.
func (q *IDQueue) Close(ctx context.Context) error {
	if q == nil {
		return fmt.Errorf("queue: close: %w", ErrNilHandle)
	}
	return q.q.Close(ctx)
}
