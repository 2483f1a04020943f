package mutex_test

import (
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/zktest"
)

// oneWay is the modelled network delay of these tests: large enough that
// round trips, not CPU, decide how long a call takes.
const oneWay = 25 * time.Millisecond

// An uncontended acquire costs one round trip: the listing is sent right
// behind the create and answered after it. (Create, then list: two.)
func TestUncontendedAcquireOneRoundTrip(t *testing.T) {
	srv := server(t)
	ns := namespace(t)
	proxy := zktest.NewProxy(t, srv.ConnectString())
	c := connect(t, proxy.Addr(), ns)
	ctx := ctxT(t)
	m := mutex.New(c, "/lock")
	// The first acquire creates the lock's parent: not measured.
	if err := m.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Release(ctx); err != nil {
		t.Fatal(err)
	}
	proxy.SetDelay(oneWay)
	rtt := 2 * oneWay
	best := time.Hour
	for i := 0; i < 5; i++ {
		start := time.Now()
		if err := m.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
		best = min(best, time.Since(start))
		if err := m.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("uncontended acquire: %v at a round trip of %v", best, rtt)
	if best >= rtt*3/2 {
		t.Fatalf("uncontended acquire took %v, more than one round trip (%v)", best, rtt)
	}
}

// A hand-over in a queue costs one round trip: the holder's delete reaches
// the server, its notification reaches the next waiter, which holds at once
// because it listed again, while the holder held, when the node before its
// predecessor went. (Notification, then a listing: two.)
func TestHandOverOneRoundTrip(t *testing.T) {
	srv := server(t)
	ns := namespace(t)
	ctx := ctxT(t)
	direct := connect(t, srv.ConnectString(), ns)
	proxy := zktest.NewProxy(t, srv.ConnectString())
	proxy.SetDelay(oneWay)
	rtt := 2 * oneWay
	core, logs := observer.New(zap.DebugLevel)
	c1 := connect(t, proxy.Addr(), ns)
	c2 := connect(t, proxy.Addr(), ns, framework.WithLogger(zap.New(core)))

	h := mutex.New(direct, "/lock")
	if err := h.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	w1, w2 := mutex.New(c1, "/lock"), mutex.New(c2, "/lock")
	got1, got2 := make(chan error, 1), make(chan time.Time, 1)
	go func() { got1 <- w1.Acquire(ctx) }()
	eventually(t, "w1 queued", func() bool { return len(children(t, direct, "/lock")) == 2 })
	go func() {
		if err := w2.Acquire(ctx); err != nil {
			t.Error(err)
		}
		got2 <- time.Now()
	}()
	eventually(t, "w2 queued", func() bool { return len(children(t, direct, "/lock")) == 3 })
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got1; err != nil {
		t.Fatal(err)
	}
	// w2 looks again when the old holder's node goes and finds w1 alone
	// ahead: then w1's deletion alone grants it the lock.
	eventually(t, "w2 waits with w1 alone ahead", func() bool {
		for _, e := range logs.FilterMessage("waiting").All() {
			if e.ContextMap()["heldWhenGone"] == true {
				return true
			}
		}
		return false
	})
	start := time.Now()
	if err := w1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	took := (<-got2).Sub(start)
	t.Logf("hand-over: %v at a round trip of %v", took, rtt)
	if took >= rtt*3/2 {
		t.Fatalf("hand-over took %v, more than one round trip (%v)", took, rtt)
	}
	if err := w2.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// The grant without a read must never be given to a waiter whose node is
// gone: here an operator deletes the waiter's node and the holder's in one
// transaction, the waiter's first, so the waiter hears of its own node's
// deletion before its predecessor's. It must make a new node and hold with
// that one.
func TestNoGrantWithoutOwnNode(t *testing.T) {
	srv := server(t)
	ns := namespace(t)
	ctx := ctxT(t)
	admin := connect(t, srv.ConnectString(), ns)
	c := connect(t, srv.ConnectString(), ns)
	for i := 0; i < 5; i++ {
		h := mutex.New(admin, "/lock")
		if err := h.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
		w := mutex.New(c, "/lock")
		got := make(chan error, 1)
		go func() { got <- w.Acquire(ctx) }()
		eventually(t, "waiter queued", func() bool { return len(children(t, admin, "/lock")) == 2 })
		ps, err := w.Participants(ctx)
		if err != nil || len(ps) != 2 {
			t.Fatalf("participants %v, %v", ps, err)
		}
		if _, err := admin.Multi(ctx, framework.DeleteOp(ps[1], -1), framework.DeleteOp(ps[0], -1)); err != nil {
			t.Fatal(err)
		}
		if err := <-got; err != nil {
			t.Fatal(err)
		}
		if w.Node() == ps[1] {
			t.Fatalf("round %d: granted on the deleted node %s", i, ps[1])
		}
		st, err := admin.Exists(ctx, w.Node())
		if err != nil || st == nil || st.EphemeralOwner != c.SessionID() {
			t.Fatalf("round %d: held node %s: %v, %v", i, w.Node(), st, err)
		}
		_ = h.Release(ctx) // its node is gone: ErrNotHeld-like errors do not matter here
		if err := w.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
