package zkconn

import (
	"sync"
	"time"
)

// ReplyGate keeps a go-zookeeper connection open while calls that read
// their reply unguarded are in flight on it. go-zookeeper v1.0.4's
// CreateTTL and CreateContainer read the reply struct even when they
// return ErrConnectionClosed because the connection's Close began; if the
// request was on the wire, its receive loop may be decoding the reply into
// that struct at the same moment: a data race (its other verbs check for
// ErrConnectionClosed first). The client drains the gate before it closes
// the connection, so the reply is decoded, and the call has returned,
// before Close begins. The zero value is an open gate.
type ReplyGate struct {
	mu      sync.Mutex
	n       int           // calls in flight
	closing bool          // drain began: calls are refused
	idle    chan struct{} // closed by the last leave while closing
}

// ClosedGate refuses every call: the gate of a connection that is no
// longer the client's (replaced, or closed).
var ClosedGate = &ReplyGate{closing: true}

// Enter admits one call, unless the connection is being closed.
func (g *ReplyGate) Enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closing {
		return false
	}
	g.n++
	return true
}

// Leave ends a call admitted by Enter.
func (g *ReplyGate) Leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n--
	if g.n == 0 && g.idle != nil {
		close(g.idle)
		g.idle = nil
	}
}

// Drain refuses calls from now on and waits until those in flight have
// returned, or until d has passed; it reports whether they have. A call in
// flight returns once its reply is read, or once go-zookeeper fails it
// (the socket closed fails every request sent on it).
func (g *ReplyGate) Drain(d time.Duration) bool {
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
	// Real time, not the client's clock: a bound on a wait for the
	// network, which a test's fake clock must not stop.
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-idle:
		return true
	case <-t.C:
		return false
	}
}
