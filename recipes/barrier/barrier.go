package barrier

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/writegrace"
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
// containers). A closed barrier stays closed. A node that holds a double
// barrier (see Wait) is refused with ErrLayoutMismatch and left alone. The
// create in flight when ctx ends is waited for up to a second more, so a
// Set that failed is never applied later (over a later Remove): nil if it
// was applied. Remove likewise.
func (b *Barrier) Set(ctx context.Context) error {
	if b == nil {
		return ErrNilHandle
	}
	if b.err != nil {
		return b.wrap("set", b.err)
	}
	wctx, done := writegrace.Context(ctx)
	_, err := b.c.Create(wctx, b.path, nil, framework.CreatingParentContainers())
	switch err = done(err); {
	case errors.Is(err, zk.ErrNodeExists):
		// Closed already, unless the node is a double barrier's.
		stat, err := b.c.Exists(ctx, b.path)
		if err == nil {
			err = b.layout(ctx, stat)
		}
		if err != nil {
			return b.wrap("set", err)
		}
	case err != nil:
		return b.wrap("set", err)
	}
	return nil
}

// Remove opens the barrier: it deletes the node; an open barrier stays
// open. A node with children is not deleted (zk.ErrNotEmpty), and if they
// are a double barrier's the error wraps ErrLayoutMismatch.
func (b *Barrier) Remove(ctx context.Context) error {
	if b == nil {
		return ErrNilHandle
	}
	if b.err != nil {
		return b.wrap("remove", b.err)
	}
	wctx, done := writegrace.Context(ctx)
	if err := done(b.c.Delete(wctx, b.path, framework.Quietly())); err != nil {
		if errors.Is(err, zk.ErrNotEmpty) {
			// Say why, if the children are a double barrier's.
			if stat, serr := b.c.Exists(ctx, b.path); serr == nil {
				if lerr := b.layout(ctx, stat); lerr != nil {
					return b.wrap("remove", lerr)
				}
			}
		}
		return b.wrap("remove", err)
	}
	return nil
}

// Wait blocks until the barrier is open (its node does not exist) or ctx
// ends (its error). It returns at once if the barrier is open. It leaves no
// watch behind. Every event only makes it look again: it returns nil only
// when the server says the node is gone. A node with children that are a
// double barrier's (a ready node, or a member named by a UUID) is not a
// closed barrier: Wait returns ErrLayoutMismatch rather than wait for a
// deletion that never comes.
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
		if err := b.layout(ctx, stat); err != nil {
			return b.wrap("wait", err)
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

// layout refuses a double barrier's layout at the path (stat is its node's,
// nil when missing): the node has children, and one is a ready node or
// named as a member is (a UUID). A plain barrier's node has no children;
// other children are left alone. It reads only when there are children.
func (b *Barrier) layout(ctx context.Context, stat *zk.Stat) error {
	if stat == nil || stat.NumChildren == 0 {
		return nil
	}
	kids, _, err := b.c.Children(ctx, b.path)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return nil
	case err != nil:
		return err
	}
	for _, k := range kids {
		if k == readyNode || isMemberName(k) {
			return fmt.Errorf("%w: the node holds a double barrier (child %q), not a plain barrier", ErrLayoutMismatch, k)
		}
	}
	return nil
}

// isMemberName reports whether name is a double barrier member's: a UUID
// in its 36-character form, as Curator and Double name them.
func isMemberName(name string) bool {
	if len(name) != 36 {
		return false
	}
	_, err := uuid.Parse(name)
	return err == nil
}
