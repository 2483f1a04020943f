package barrier

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
)

// Barrier is Curator's DistributedBarrier: closed while its node exists.
// Set closes it, Remove opens it, Wait blocks until it is open. A Barrier
// is safe for concurrent use; a nil *Barrier returns ErrNilHandle.
type Barrier struct {
	c    *framework.Client
	path string
	err  error

	wakeups atomic.Int64 // events that made Wait look again (tests)
}

// New returns the barrier at path. It does no I/O: a nil client or an
// invalid path is reported by every call.
func New(c *framework.Client, path string) *Barrier {
	return &Barrier{c: c, path: path, err: validate(c, path)}
}

func (b *Barrier) wrap(op string, err error) error {
	return fmt.Errorf("barrier %s: %s: %w", b.path, op, err)
}

// Set closes the barrier: it makes the node (and its missing ancestors, as
// containers). A closed barrier stays closed.
func (b *Barrier) Set(ctx context.Context) error {
	if b == nil {
		return ErrNilHandle
	}
	if b.err != nil {
		return b.wrap("set", b.err)
	}
	_, err := b.c.Create(ctx, b.path, nil, framework.CreatingParentContainers())
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return b.wrap("set", err)
	}
	return nil
}

// Remove opens the barrier: it deletes the node; an open barrier stays
// open.
func (b *Barrier) Remove(ctx context.Context) error {
	if b == nil {
		return ErrNilHandle
	}
	if b.err != nil {
		return b.wrap("remove", b.err)
	}
	if err := b.c.Delete(ctx, b.path, framework.Quietly()); err != nil {
		return b.wrap("remove", err)
	}
	return nil
}

// Wait blocks until the barrier is open (its node does not exist) or ctx
// ends (its error). It returns at once if the barrier is open. It leaves no
// watch behind.
func (b *Barrier) Wait(ctx context.Context) error {
	if b == nil {
		return ErrNilHandle
	}
	if b.err != nil {
		return b.wrap("wait", b.err)
	}
	// Watch first, then look: a deletion after the look is an event. Any
	// event (a reconnection's resync too) only says "look again": the
	// node's absence, read from the server, is the condition.
	w, err := b.c.Watch(ctx, b.path)
	if err != nil {
		return b.wrap("wait", err)
	}
	defer func() { _ = w.Close() }()
	for {
		stat, err := b.c.Exists(ctx, b.path)
		if err != nil {
			return b.wrap("wait", err)
		}
		if stat == nil {
			return nil
		}
		if err := next(ctx, w); err != nil {
			return b.wrap("wait", err)
		}
		b.wakeups.Add(1)
	}
}

// next waits for w's next event (any: the caller looks again), ctx's end
// or w's.
func next(ctx context.Context, w *framework.Watcher) error {
	select {
	case _, ok := <-w.Events():
		if !ok {
			if err := w.Err(); err != nil {
				return err
			}
			return framework.ErrClosed
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
