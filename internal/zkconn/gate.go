package zkconn

import (
	"context"
	"time"
)

// watchResetWait bounds the wait for the setWatches request: if the count
// says watches are set but go-zookeeper sends none, requests go on after it.
var resetWait = time.Second

// watchesSet returns the live connection's setWatches signal (see
// Conn.watchesSet), nil between connections.
func (w *Wire) watchesSet() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.live == nil {
		return nil
	}
	return w.live.watchesSet
}

// GiveUpWatchesSet opens the live connection's setWatches signal without
// the request: a count that said watches were set was wrong.
func (w *Wire) GiveUpWatchesSet() {
	w.mu.Lock()
	live := w.live
	w.mu.Unlock()
	if live == nil {
		return
	}
	live.sentMu.Lock()
	defer live.sentMu.Unlock()
	if !live.setSeen && live.watchesSet != nil {
		live.setSeen = true
		close(live.watchesSet)
	}
}

// WaitWatchesSet holds a request back until it may go out: on a new
// connection whose watches go-zookeeper sets again it waits for the
// setWatches request to be written (at most resetWait), or ctx, and
// returns ctx.Err() if ctx ends first. Between connections it returns
// at once.
func (w *Wire) WaitWatchesSet(ctx context.Context) error {
	gate := w.watchesSet()
	if gate == nil {
		return nil
	}
	select {
	case <-gate:
		return nil
	default:
	}
	t := time.NewTimer(resetWait)
	defer t.Stop()
	select {
	case <-gate:
	case <-t.C:
		w.GiveUpWatchesSet() // none came: hold no later request
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// gateClosed reports whether the connection's watches are set again (or
// need not be).
func (c *Conn) gateClosed() bool {
	if c.watchesSet == nil {
		return true // a connection made without one waits for nothing
	}
	select {
	case <-c.watchesSet:
		return true
	default:
		return false
	}
}

// awaitWatchesSet waits for watchesSet, at most watchResetWait.
func (c *Conn) awaitWatchesSet() {
	t := time.NewTimer(resetWait)
	defer t.Stop()
	select {
	case <-c.watchesSet:
	case <-t.C:
		c.sentMu.Lock()
		if !c.setSeen && c.watchesSet != nil {
			c.setSeen = true
			close(c.watchesSet)
		}
		c.sentMu.Unlock()
	}
	if recordOps.Load() {
		c.sentMu.Lock()
		c.ops = append(c.ops, OpReplyReleased)
		c.sentMu.Unlock()
	}
}
