package zktest_test

import (
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// waitTimeout bounds every wait on a server or client event in these tests.
const waitTimeout = 30 * time.Second

// quietLogger keeps go-zookeeper from logging through the std logger (and
// from logging through t after a test ends).
type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// sessionEvents records a client's session events from the event callback,
// which go-zookeeper never drops (its channel does).
type sessionEvents struct {
	mu      sync.Mutex
	events  []zk.Event
	changed chan struct{} // closed and replaced on every event
}

func newSessionEvents() *sessionEvents {
	return &sessionEvents{changed: make(chan struct{})}
}

func (r *sessionEvents) add(e zk.Event) {
	if e.Type != zk.EventSession {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	close(r.changed)
	r.changed = make(chan struct{})
}

// await blocks until a state event at index from or later, returning the
// index after it.
func (r *sessionEvents) await(t *testing.T, from int, state zk.State) int {
	t.Helper()
	timer := time.NewTimer(waitTimeout)
	defer timer.Stop()
	for {
		r.mu.Lock()
		for i := from; i < len(r.events); i++ {
			if r.events[i].State == state {
				r.mu.Unlock()
				return i + 1
			}
		}
		changed := r.changed
		r.mu.Unlock()
		select {
		case <-changed:
		case <-timer.C:
			t.Fatalf("no %v session event within %v", state, waitTimeout)
		}
	}
}

// connect opens a session at addr (one or more comma-separated servers)
// and waits until it is established; t.Cleanup closes it.
func connect(t *testing.T, addrs []string) (*zk.Conn, *sessionEvents) {
	t.Helper()
	ev := newSessionEvents()
	c, _, err := zk.Connect(addrs, 20*time.Second, zk.WithLogger(quietLogger{}), zk.WithEventCallback(ev.add))
	if err != nil {
		t.Fatalf("connect %v: %v", addrs, err)
	}
	t.Cleanup(c.Close)
	ev.await(t, 0, zk.StateHasSession)
	return c, ev
}

// eventually polls cond until it holds or waitTimeout passes.
func eventually(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v (last error: %v)", what, waitTimeout, err)
		}
		<-tick.C
	}
}

var openACL = zk.WorldACL(zk.PermAll)
