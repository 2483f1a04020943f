package queue

import (
	"context"
	"fmt"

	"github.com/gocurator/curator/framework"
)

// PriorityQueue is a Queue whose items are taken lowest priority first,
// then in put order: Curator's DistributedPriorityQueue, on its layout
// ("<path>/queue-<priority><seq>", the priority written so that names sort
// by it). A consumer looks at the queue again after each item when it
// changed, so an urgent item put meanwhile is taken next. A failed consume
// requeues an item with its priority (Curator requeues it without, and it
// jumps ahead of every item). It is safe for concurrent use, as a Queue is.
type PriorityQueue struct{ q *Queue }

// NewPriority returns a handle on the priority queue at path; it does no
// I/O. Options and bad input are as New's.
func NewPriority(c *framework.Client, path string, opts ...Option) *PriorityQueue {
	q := New(c, path, opts...)
	q.v = priorityQueue
	return &PriorityQueue{q: q}
}

// Path returns the queue's path.
func (q *PriorityQueue) Path() string {
	if q == nil {
		return ""
	}
	return q.q.Path()
}

// Put adds item with priority (lower comes out first; Curator's int, so a
// priority outside int32 is refused with ErrInvalidOption). Otherwise as
// Queue.Put.
func (q *PriorityQueue) Put(ctx context.Context, item []byte, priority int) error {
	return q.put(ctx, "put", [][]byte{item}, priority)
}

// PutMulti adds items as one node with one priority (Curator's putMulti):
// as Queue.PutMulti.
func (q *PriorityQueue) PutMulti(ctx context.Context, items [][]byte, priority int) error {
	if q != nil && len(items) == 0 {
		return q.q.wrap("put multi", fmt.Errorf("%w: no items", ErrInvalidOption))
	}
	return q.put(ctx, "put multi", items, priority)
}

func (q *PriorityQueue) put(ctx context.Context, verb string, items [][]byte, priority int) error {
	if q == nil {
		return fmt.Errorf("queue: %s: %w", verb, ErrNilHandle)
	}
	if err := q.q.check(ctx, verb); err != nil {
		return err
	}
	if err := checkPriority(priority); err != nil {
		return q.q.wrap(verb, err)
	}
	return q.q.wrap(verb, q.q.create(ctx, priorityPrefix(int32(priority)), encodeItems(items)))
}

// Consume is Queue.Consume, in priority order; each Item has its Priority.
func (q *PriorityQueue) Consume(ctx context.Context, fn func(ctx context.Context, it Item) error) error {
	if q == nil {
		return fmt.Errorf("queue: consume: %w", ErrNilHandle)
	}
	return q.q.Consume(ctx, fn)
}

// Close is Queue.Close.
func (q *PriorityQueue) Close(ctx context.Context) error {
	if q == nil {
		return fmt.Errorf("queue: close: %w", ErrNilHandle)
	}
	return q.q.Close(ctx)
}
