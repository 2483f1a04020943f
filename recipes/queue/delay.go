package queue

import (
	"context"
	"fmt"
	"time"

	"github.com/gocurator/curator/framework"
)

// DelayQueue is a Queue whose items are delivered no earlier than a time
// given at put: Curator's DistributedDelayQueue, on its layout
// ("<path>/queue-|<epoch ms, hex>|<seq>"), taken in time order. A waiting
// consumer sleeps until the earliest item is due, or the queue changes
// (no polling). Times are compared with the consumer's clock, so clocks
// skewed between producers and consumers move delivery by the skew. A
// failed consume requeues an item with its time, so it is taken again at
// once, in its place (Curator requeues it without one). It is safe for
// concurrent use, as a Queue is.
type DelayQueue struct{ q *Queue }

// NewDelay returns a handle on the delay queue at path; it does no I/O.
// Options and bad input are as New's.
func NewDelay(c *framework.Client, path string, opts ...Option) *DelayQueue {
	q := New(c, path, opts...)
	q.v = delayQueue
	return &DelayQueue{q: q}
}

// Path returns the queue's path.
func (q *DelayQueue) Path() string {
	if q == nil {
		return ""
	}
	return q.q.Path()
}

// Put adds item, to be delivered no earlier than at (kept to the
// millisecond; a time in the past is due at once, a time not after the
// Unix epoch is refused with ErrInvalidOption, as Curator refuses it).
// Otherwise as Queue.Put.
func (q *DelayQueue) Put(ctx context.Context, item []byte, at time.Time) error {
	return q.put(ctx, "put", [][]byte{item}, at)
}

// PutMulti adds items as one node with one time (Curator's putMulti): as
// Queue.PutMulti.
func (q *DelayQueue) PutMulti(ctx context.Context, items [][]byte, at time.Time) error {
	if q != nil && len(items) == 0 {
		return q.q.wrap("put multi", fmt.Errorf("%w: no items", ErrInvalidOption))
	}
	return q.put(ctx, "put multi", items, at)
}

func (q *DelayQueue) put(ctx context.Context, verb string, items [][]byte, at time.Time) error {
	if q == nil {
		return fmt.Errorf("queue: %s: %w", verb, ErrNilHandle)
	}
	if err := q.q.check(ctx, verb); err != nil {
		return err
	}
	if at.UnixMilli() <= 0 {
		return q.q.wrap(verb, fmt.Errorf("%w: time %v not after the Unix epoch", ErrInvalidOption, at))
	}
	return q.q.wrap(verb, q.q.create(ctx, delayPrefix(at), encodeItems(items)))
}

// Consume is Queue.Consume, in time order, each item once it is due; each
// Item has its Due time.
func (q *DelayQueue) Consume(ctx context.Context, fn func(ctx context.Context, it Item) error) error {
	if q == nil {
		return fmt.Errorf("queue: consume: %w", ErrNilHandle)
	}
	return q.q.Consume(ctx, fn)
}

// Close is Queue.Close.
func (q *DelayQueue) Close(ctx context.Context) error {
	if q == nil {
		return fmt.Errorf("queue: close: %w", ErrNilHandle)
	}
	return q.q.Close(ctx)
}
