package locking_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/telemetrytests/internal/oteltest"
	"github.com/gocurator/curator/zktest"
)

// oneWay is the modelled network delay of the round-trip tests: it keeps
// the listing that a create carries behind it on its way before the
// create's reply is back, as on a real network.
const oneWay = 25 * time.Millisecond

// requests returns, per operation (create, get, exists, children, ...),
// how many requests a client measured into tel made: every request is one
// record of its duration. A create's listing sent right behind it is part
// of the create (framework.ListingParent); a listing that has to follow the
// create's reply instead is a children request of its own.
func requests(t *testing.T, tel *oteltest.Telemetry) map[string]uint64 {
	t.Helper()
	n := map[string]uint64{}
	for _, p := range tel.Points(t, "curator.client.request.duration") {
		op, _ := p.Attrs.Value("curator.operation")
		n[op.AsString()] += p.Count
	}
	return n
}

// since returns the requests made between two readings of requests.
func since(before, after map[string]uint64) map[string]uint64 {
	d := map[string]uint64{}
	for op, n := range after {
		if n > before[op] {
			d[op] = n - before[op]
		}
	}
	return d
}

// An uncontended acquire costs one round trip: the listing is sent right
// behind the create and answered after it, and nothing else is asked
// (create, then list: two). The requests are counted, not timed.
func TestUncontendedAcquireOneRoundTrip(t *testing.T) {
	ns := testkit.Unique(t)
	tel := oteltest.New(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns, framework.WithMeterProvider(tel.Meters))
	ctx := testkit.Ctx(t)
	// A create that must make the lock's parent lists after it: not what
	// is measured. A persistent parent, which the server's container
	// reaper leaves alone between acquires.
	if _, err := c.Create(ctx, "/lock", []byte{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), "/lock") })
	proxy.SetDelay(oneWay)
	l := newLoop(c, "/lock")
	want := map[string]uint64{"create": 1}
	for i := 0; i < 5; i++ {
		before := requests(t, tel)
		start := time.Now()
		h := mustAcquire(t, l)
		took := time.Since(start)
		if got := since(before, requests(t, tel)); !maps.Equal(got, want) {
			t.Fatalf("acquire %d made requests %v, want %v (the create, its listing behind it)", i, got, want)
		}
		t.Logf("uncontended acquire: %v at a round trip of %v", took, 2*oneWay)
		release(t, h)
	}
}

// A hand-over in a queue costs one round trip: the holder's delete reaches
// the server, its notification reaches the next waiter, which holds at once,
// with no request of its own, because it listed again, while the holder
// held, when the node before its predecessor went. (Notification, then a
// listing: two.) The next waiter's requests are counted, not timed.
func TestHandOverOneRoundTrip(t *testing.T) {
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	direct := testkit.Connect(t, zkAddr, ns)
	proxy := zktest.NewProxy(t, zkAddr)
	proxy.SetDelay(oneWay)
	core, logs := observer.New(zap.DebugLevel)
	tel := oteltest.New(t)
	c1 := testkit.Connect(t, proxy.Addr(), ns)
	c2 := testkit.Connect(t, proxy.Addr(), ns, framework.WithLogger(zap.New(core)), framework.WithMeterProvider(tel.Meters))

	h := mustAcquire(t, newLoop(direct, "/lock"))
	got1 := acquireAsync(ctx, newLoop(c1, "/lock"))
	testkit.AwaitWatch(t, zkAddr, c1, h.Node())
	got2 := acquireAsync(ctx, newLoop(c2, "/lock"))
	testkit.Eventually(t, "w2 queued", func() bool { return len(testkit.Children(t, direct, "/lock")) == 3 })
	release(t, h)
	w1 := await(t, got1)
	if w1.err != nil {
		t.Fatal(w1.err)
	}
	// w2 looks again when the old holder's node goes and finds w1 alone
	// ahead: then w1's deletion alone grants it the lock. It logs that
	// once its watches are set: every request before is counted by then.
	testkit.Eventually(t, "w2 waits with w1 alone ahead", func() bool {
		for _, e := range logs.FilterMessage("waiting").All() {
			if e.ContextMap()["heldWhenGone"] == true {
				return true
			}
		}
		return false
	})
	before := requests(t, tel)
	start := time.Now()
	release(t, w1.h)
	w2 := await(t, got2)
	took := time.Since(start)
	if w2.err != nil {
		t.Fatal(w2.err)
	}
	if got := since(before, requests(t, tel)); len(got) != 0 {
		t.Fatalf("w2 made requests %v between w1's release and its grant, want none", got)
	}
	t.Logf("hand-over: %v at a round trip of %v", took, 2*oneWay)
	release(t, w2.h)
}
