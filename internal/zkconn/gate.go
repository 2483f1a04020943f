package zkconn

import (
	"context"
	"encoding/binary"
	"time"

	"github.com/gocurator/curator/internal/clock"
	"github.com/gocurator/curator/internal/zkwire"
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

// settleWait is the settle window: how long after the connect response
// go-zookeeper's loop goroutine is taken to have passed sendSetWatches.
// It runs a few statements after reading the connect response, with
// nothing to block on; the window only has to outlast a descheduling.
var settleWait = 10 * time.Millisecond

// settleClock times the settle window (a test's fake clock replaces it).
var settleClock clock.Clock = clock.Real

// setsWatch reports whether a request frame (length, xid, opcode, path,
// watch flag) is a read that sets one of go-zookeeper's watches: exists,
// getData or getChildren with its watch flag on.
func setsWatch(p []byte) bool {
	if len(p) < 16 {
		return false
	}
	switch int32(binary.BigEndian.Uint32(p[8:12])) {
	case zkwire.OpExists, zkwire.OpGetData, zkwire.OpGetChildren, zkwire.OpGetChildren2:
	default:
		return false
	}
	n := int(int32(binary.BigEndian.Uint32(p[12:16])))
	if n < 0 || 16+n >= len(p) {
		return false
	}
	return p[16+n] != 0
}

// wroteSetWatchesLocked records that go-zookeeper wrote a setWatches
// request: it had read its lastZxid by then. c.sentMu is held.
func (c *Conn) wroteSetWatchesLocked() {
	if !c.setWrote {
		c.setWrote = true
		if c.setWritten != nil {
			close(c.setWritten)
		}
	}
}

// settleLeft returns how long a reply must still be held on a connection
// whose watch reset gate opened at the dial (nothing to set again), 0 if
// none: go-zookeeper runs sendSetWatches on its loop goroutine just after
// it starts the receive loop, so if a reply that gives it a watch (one
// of its one-shot reads) is handed on before sendSetWatches runs, that
// finds the watch and reads lastZxid while the receive loop writes it
// for the next reply (the race the gate is for, on a new session, where
// the count said none at the dial). So once such a reply has passed, the
// replies after it wait for the setWatches request (which then comes,
// and is written after the read) or for the end of the settle window,
// by which time sendSetWatches has run.
func (c *Conn) settleLeft() time.Duration {
	c.sentMu.Lock()
	defer c.sentMu.Unlock()
	if !c.zkWatched || c.setWrote || c.connectedAt.IsZero() {
		return 0
	}
	return c.connectedAt.Add(settleWait).Sub(settleClock.Now())
}

// awaitSettled waits for the setWatches request, at most d.
func (c *Conn) awaitSettled(d time.Duration) {
	over := make(chan struct{})
	t := settleClock.AfterFunc(d, func() { close(over) })
	defer t.Stop()
	select {
	case <-c.setWritten:
	case <-over:
	}
	if recordOps.Load() {
		c.sentMu.Lock()
		c.ops = append(c.ops, OpReplySettled)
		c.sentMu.Unlock()
	}
}
