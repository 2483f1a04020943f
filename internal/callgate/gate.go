// Package callgate is a gate that admits calls until it is drained, and
// then waits, for a bounded time, for the calls admitted to return.
// framework puts one on each go-zookeeper connection: the calls that read
// their reply unguarded (go-zookeeper's CreateTTL and CreateContainer)
// enter it, and closing the connection drains it first, so that no reply
// is decoded while Close runs.
package callgate

import (
	"sync"
	"time"
)

// Gate admits calls until Drain. The zero value is an open gate.
type Gate struct {
	mu      sync.Mutex
	n       int           // calls in flight
	closing bool          // drain began: calls are refused
	idle    chan struct{} // closed by the last Leave while closing
}

// closed refuses every call.
var closed = &Gate{closing: true}

// Closed returns a gate that refuses every call: the gate of a connection
// that is no longer in use. It is shared; never drain it.
func Closed() *Gate { return closed }

// Enter admits one call, unless the gate is draining; a call admitted
// calls Leave when it returns.
func (g *Gate) Enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closing {
		return false
	}
	g.n++
	return true
}

// Leave ends a call admitted by Enter.
func (g *Gate) Leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n--
	if g.n == 0 && g.idle != nil {
		close(g.idle)
		g.idle = nil
	}
}

// Drain refuses calls from now on and waits until those in flight have
// returned, or until d has passed; it reports whether they have. It waits
// in real time, not on an injected clock: it bounds a wait for the
// network, which a test's fake clock must not stop.
func (g *Gate) Drain(d time.Duration) bool {
	g.mu.Lock()
	g.closing = true
	if g.n == 0 {
		g.mu.Unlock()
		return true
	}
	if g.idle == nil {
		g.idle = make(chan struct{})
	}
	idle := g.idle
	g.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-idle:
		return true
	case <-t.C:
		return false
	}
}
