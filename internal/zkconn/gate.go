package zkconn

import (
	"context"
	"sync"
	"time"
)

// resetWait bounds the wait for the setWatches request: if the count
// says watches are set but go-zookeeper sends none, requests go on after it.
var resetWait = time.Second

// resetGate opens once go-zookeeper has written its setWatches request on
// a connection, or need not (see the package doc). The zero value is
// open: a connection made without one waits for nothing.
type resetGate struct {
	mu     sync.Mutex
	ch     chan struct{} // closed when the gate opens; nil: always open
	opened bool
}

// arm closes the gate: it opens at the setWatches request.
func (g *resetGate) arm() { g.ch = make(chan struct{}) }

// open opens the gate (again: nothing).
func (g *resetGate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.opened && g.ch != nil {
		g.opened = true
		close(g.ch)
	}
}

// passed reports whether the gate is open.
func (g *resetGate) passed() bool {
	if g.ch == nil {
		return true
	}
	select {
	case <-g.ch:
		return true
	default:
		return false
	}
}

// watchesSet returns the live connection's gate channel, nil between
// connections.
func (w *Wire) watchesSet() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.live == nil {
		return nil
	}
	return w.live.gate.ch
}

// GiveUpWatchesSet opens the live connection's gate without the
// setWatches request: a count that said watches were set was wrong.
func (w *Wire) GiveUpWatchesSet() {
	if live := w.Live(); live != nil {
		live.gate.open()
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

// awaitWatchesSet waits for watchesSet, at most watchResetWait.
func (c *Conn) awaitWatchesSet() {
	t := time.NewTimer(resetWait)
	defer t.Stop()
	select {
	case <-c.gate.ch:
	case <-t.C:
		c.gate.open()
	}
	c.ledger.note(OpReplyReleased)
}
