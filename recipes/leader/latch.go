package leader

import (
	"context"
	"sync"

	"github.com/gocurator/curator/internal/fanout"
)

// Listener is told when a Latch gains and loses leadership, like Curator's
// LeaderLatchListener. Calls are made one at a time, in order (IsLeader,
// NotLeader, IsLeader, ...), on the latch's goroutine: a slow callback
// delays the next campaign, never the client. Either field may be nil.
type Listener struct {
	// IsLeader is called with the new term once we lead (Curator's
	// isLeader). The term's Context is the one to run leader work in.
	IsLeader func(t *Term)
	// NotLeader is called once the term ended, with its Err (Curator's
	// notLeader).
	NotLeader func(err error)
}

// Latch keeps a candidate in the election in the background, like
// Curator's LeaderLatch after start(): it campaigns, holds each term until
// it ends and campaigns again, until Close. HasLeadership, Term and Await
// report on it; a Listener is told of each change. Safe for concurrent use.
type Latch struct {
	e      *Election
	l      Listener
	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	term    *Term         // the current term, nil when not leading
	changed fanout.Signal // notified when term changes, closed when the latch stops
	stopped bool
	err     error // why the latch stopped (Close: nil)
}

// Start starts a Latch on the election (Curator's LeaderLatch.start): it
// campaigns at once, in the background, until Close or the client's
// Close. It does no I/O itself.
func (e *Election) Start(l Listener) *Latch {
	ctx, cancel := context.WithCancel(context.Background())
	lt := &Latch{e: e, l: l, ctx: ctx, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(lt.done)
		err := e.run(ctx, lt.lead)
		lt.mu.Lock()
		if ctx.Err() == nil {
			lt.err = err
		}
		lt.stopped = true
		lt.changed.Close()
		lt.mu.Unlock()
	}()
	return lt
}

// lead holds one term: it reports it, waits for its end, reports that.
func (lt *Latch) lead(t *Term) error {
	lt.set(t)
	if lt.l.IsLeader != nil {
		lt.l.IsLeader(t)
	}
	select {
	case <-t.Done():
	case <-lt.ctx.Done():
		rctx, cancel := lt.e.c.CleanupContext(lt.ctx)
		_ = t.Resign(rctx)
		cancel()
	}
	lt.set(nil)
	if lt.l.NotLeader != nil {
		lt.l.NotLeader(t.Err())
	}
	return nil
}

func (lt *Latch) set(t *Term) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	lt.term = t
	lt.changed.Notify()
}

// HasLeadership reports whether the latch leads now (Curator's
// hasLeadership): it has a term and the term has not ended. It does no
// I/O.
func (lt *Latch) HasLeadership() bool {
	t := lt.Term()
	return t != nil && t.Err() == nil
}

// Term returns the current term, nil when the latch does not lead.
func (lt *Latch) Term() *Term {
	if lt == nil {
		return nil
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	return lt.term
}

// Await blocks until the latch leads and returns the term (Curator's
// await), or returns ctx's error, or the error that stopped the latch
// (ErrNotLeader after Close).
func (lt *Latch) Await(ctx context.Context) (*Term, error) {
	if lt == nil {
		return nil, ErrNilHandle
	}
	for {
		lt.mu.Lock()
		t, ch, err, stopped := lt.term, lt.changed.C(), lt.err, lt.stopped
		lt.mu.Unlock()
		if t != nil && t.Err() == nil {
			return t, nil
		}
		if stopped {
			if err == nil {
				err = ErrNotLeader
			}
			return nil, err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Done returns a channel closed when the latch stopped: after Close, or
// once the client closed (Err says why).
func (lt *Latch) Done() <-chan struct{} {
	if lt == nil {
		return fanout.Closed()
	}
	return lt.done
}

// Err returns nil while the latch runs or after Close; otherwise the error
// that stopped it, such as framework.ErrClosed.
func (lt *Latch) Err() error {
	if lt == nil {
		return ErrNilHandle
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	return lt.err
}

// Close stops the latch (Curator's close): it stops campaigning, resigns a
// term it holds (the Listener is told NotLeader) and waits, within ctx,
// for the latch's goroutine to end. Our node is deleted before Close
// returns while the connection is up, even if ctx has ended (within a
// round trip more), else by a guaranteed delete in the background; a
// campaign in progress deletes its node the same way. If a Listener
// callback blocks, Close returns ctx's error once ctx ends, the node
// deleted all the same, and NotLeader is called once the callback
// returns. Close is idempotent.
func (lt *Latch) Close(ctx context.Context) error {
	if lt == nil {
		return ErrNilHandle
	}
	lt.cancel()
	if t := lt.Term(); t != nil {
		// The clean-up's context, not ctx: an ended ctx (a Close that
		// must not wait for a blocked Listener) still deletes our node
		// before Close returns while connected.
		rctx, cancel := lt.e.c.CleanupContext(ctx)
		_ = t.Resign(rctx)
		cancel()
	}
	select {
	case <-lt.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
