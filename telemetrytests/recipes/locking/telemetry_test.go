package locking_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/telemetry"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/locking"
	"github.com/gocurator/curator/telemetrytests/internal/oteltest"
	"github.com/gocurator/curator/zktest"
)

func TestTelemetry(t *testing.T) {
	t.Run("contended", func(t *testing.T) {
		t.Parallel()
		testTelemetryContended(t, zkAddr)
	})
	t.Run("partition", func(t *testing.T) {
		t.Parallel()
		testTelemetryPartition(t, zkAddr)
	})
	t.Run("revocation", func(t *testing.T) {
		t.Parallel()
		testTelemetryRevocation(t, zkAddr)
	})
	t.Run("zero", func(t *testing.T) {
		t.Parallel()
		testTelemetryZero(t, zkAddr)
	})
}

// A lock's counters exist at 0 from its first acquire: the dashboard's
// losses and hand-overs panels showed "No data" for a lock never lost nor
// handed over, and increase() missed the first loss. The scope carries the
// module's version (as far as a test binary knows it).
func testTelemetryZero(t *testing.T, addr string) {
	tel := oteltest.New(t)
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, addr, testkit.Unique(t), framework.WithMeterProvider(tel.Meters))
	h, err := locking.New(c, "/locks/z", mutexDriver).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	name := attribute.String("curator.lock.name", "/locks/z")
	kind := attribute.String("curator.lock.kind", "mutex")
	type series struct {
		metric string
		extra  []attribute.KeyValue
	}
	want := []series{{"curator.lock.handovers", nil}, {"curator.lock.holders", nil}, {"curator.lock.waiters", nil}}
	for _, r := range []string{"suspended", "session_expired", "read_only", "connection", "node_deleted", "revoked"} {
		want = append(want, series{"curator.lock.losses", []attribute.KeyValue{attribute.String("curator.loss.reason", r)}})
	}
	for _, w := range want {
		attrs := append([]attribute.KeyValue{kind, name}, w.extra...)
		if !tel.Has(t, w.metric, attrs...) {
			t.Errorf("%s%v: no series after an acquire, want one at 0", w.metric, w.extra)
		} else if got := tel.Sum(t, w.metric, attrs...); got != 0 {
			t.Errorf("%s%v = %d, want 0", w.metric, w.extra, got)
		}
	}
	// The scope is the lock's, with the library's version as this binary
	// knows it: none, since a test binary records no versions of its
	// dependencies; recipes/locking's TestTelemetryScopeVersion checks the
	// version where the library is the main module.
	if v, ok := tel.ScopeVersion(t, locking.ScopeName); !ok || v != telemetry.Version() {
		t.Errorf("scope %s: version %q (recorded: %v), want the module's, %q", locking.ScopeName, v, ok, telemetry.Version())
	}
}

// A contended run: the metrics add up to the acquisitions made, and every
// acquire has a span with its events and fencing token.
func testTelemetryContended(t *testing.T, addr string) {
	const (
		clients = 3
		rounds  = 4
		path    = "/locks/orders"
	)
	tel := oteltest.New(t)
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	locks := make([]*locking.Loop, clients)
	for i := range locks {
		c := testkit.Connect(t, addr, ns, framework.WithMeterProvider(tel.Meters), framework.WithTracerProvider(tel.Traces))
		locks[i] = locking.New(c, path, mutexDriver)
	}
	admin := testkit.Connect(t, addr, ns)

	// The first holder keeps the lock until every other client queues, so
	// that at least clients acquires are handed the lock.
	first, err := locks[0].Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		made    = 1 // acquisitions
		blocked int // acquires that would have blocked
		errs    []error
	)
	for i := range locks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				if i == 0 && r == 0 {
					continue // the first hold, above
				}
				h, err := locks[i].Acquire(ctx)
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				// While held, a try from another client would block.
				_, ok, err := locks[(i+1)%clients].TryAcquire(ctx)
				mu.Lock()
				made++
				if !ok && err == nil {
					blocked++
				} else {
					errs = append(errs, fmt.Errorf("try while held: %v, %v; want busy (false, nil)", ok, err))
				}
				mu.Unlock()
				if err := h.Release(ctx); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	// Behind the first hold: every goroutine's acquire (client 0's too).
	testkit.Eventually(t, "every client queues", func() bool {
		return len(testkit.Children(t, admin, path)) == clients+1
	})
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	kind, name := attribute.String("curator.lock.kind", "mutex"), attribute.String("curator.lock.name", path)
	result := func(r string) attribute.KeyValue { return attribute.String("curator.result", r) }
	if got := tel.Count(t, "curator.lock.acquire.duration", kind, name, result("acquired")); got != uint64(made) {
		t.Errorf("acquires acquired = %d, want %d", got, made)
	}
	if got := tel.Count(t, "curator.lock.acquire.duration", kind, name, result("would_block")); got != uint64(blocked) {
		t.Errorf("acquires would_block = %d, want %d", got, blocked)
	}
	if got := tel.Count(t, "curator.lock.acquire.duration"); got != uint64(made+blocked) {
		t.Errorf("acquires = %d, want %d", got, made+blocked)
	}
	if got := tel.Count(t, "curator.lock.hold.duration", kind, name, attribute.String("curator.hold.end", "released")); got != uint64(made) {
		t.Errorf("holds released = %d, want %d", got, made)
	}
	if got := tel.Count(t, "curator.lock.hold.duration"); got != uint64(made) {
		t.Errorf("holds = %d, want %d", got, made)
	}
	handovers := tel.Sum(t, "curator.lock.handovers", kind, name)
	if handovers < clients || handovers > int64(made) {
		t.Errorf("handovers = %d, want between %d and %d", handovers, clients, made)
	}
	for _, g := range []string{"curator.lock.waiters", "curator.lock.holders"} {
		if got := tel.Sum(t, g); got != 0 {
			t.Errorf("%s = %d after the run, want 0", g, got)
		}
	}
	if got := tel.Series(t, "curator.lock.losses"); len(got) != 0 {
		t.Errorf("losses %v, want none", got)
	}

	// Spans: one per acquire, with its events; the client's create is a
	// child of it.
	spans := tel.Ended("curator.lock.acquire")
	if len(spans) != made+blocked {
		t.Fatalf("%d acquire spans, want %d", len(spans), made+blocked)
	}
	acquireIDs := map[[8]byte]bool{}
	var held, watched int
	for _, s := range spans {
		acquireIDs[s.SpanContext().SpanID()] = true
		events := eventNames(s)
		if !events["created"] || !events["listed"] {
			t.Errorf("acquire span events %v, want created and listed", events)
		}
		if events["watching"] {
			watched++
		}
		if !events["held"] {
			continue
		}
		held++
		if tok, ok := spanAttr(s, "curator.lock.fencing_token"); !ok || tok.AsInt64() <= 0 {
			t.Errorf("held span's fencing token = %v, %v; want > 0", tok, ok)
		}
		if r, _ := spanAttr(s, "curator.result"); r.AsString() != "acquired" {
			t.Errorf("held span's result = %q", r.AsString())
		}
	}
	if held != made {
		t.Errorf("%d spans with a held event, want %d", held, made)
	}
	if int64(watched) != handovers {
		t.Errorf("%d spans with a watching event, want %d (the handovers)", watched, handovers)
	}
	creates := 0
	for _, s := range tel.Ended("curator.client.create") {
		if acquireIDs[s.Parent().SpanID()] {
			creates++
		}
	}
	if creates != made+blocked {
		t.Errorf("%d create spans under acquire spans, want %d", creates, made+blocked)
	}
}

// A partition longer than the session: each hold is lost exactly once,
// with the reason its client's error policy gives.
func testTelemetryPartition(t *testing.T, addr string) {
	tel := oteltest.New(t)
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	proxy := zktest.NewProxy(t, addr)
	opts := []framework.Option{framework.WithMeterProvider(tel.Meters), framework.WithSessionTimeout(2 * time.Second)}
	std := testkit.Connect(t, proxy.Addr(), ns, opts...)
	sess := testkit.Connect(t, proxy.Addr(), ns, append(opts, framework.WithErrorPolicy(connstate.SessionPolicy{}))...)
	a, err := locking.New(std, "/locks/a", mutexDriver).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := locking.New(sess, "/locks/b", mutexDriver).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := tel.Sum(t, "curator.lock.holders"); got != 2 {
		t.Fatalf("holders = %d, want 2", got)
	}
	const oldest = "curator.lock.hold.oldest"
	if got := tel.Points(t, oldest); len(got) != 2 || got[0].Gauge < 0 || got[1].Gauge < 0 {
		t.Fatalf("oldest holds = %v, want a non-negative age for each lock", got)
	}

	proxy.Cut()
	testkit.WaitClosed(t, a.Done(), "the standard-policy hold to end")
	testkit.WaitClosed(t, b.Done(), "the session-policy hold to end")
	// Both sessions are lost (on the client side) as well: a second state
	// that ends holds must not count a second loss.
	testkit.WaitState(t, std, connstate.Lost)
	testkit.WaitState(t, sess, connstate.Lost)

	for _, tt := range []struct{ lock, reason string }{{"/locks/a", "suspended"}, {"/locks/b", "session_expired"}} {
		if got := tel.Sum(t, "curator.lock.losses", attribute.String("curator.lock.name", tt.lock),
			attribute.String("curator.loss.reason", tt.reason)); got != 1 {
			t.Errorf("losses of %s for %s = %d, want 1", tt.lock, tt.reason, got)
		}
	}
	if got := tel.Sum(t, "curator.lock.losses"); got != 2 {
		t.Errorf("losses = %d (%v), want 2", got, tel.Series(t, "curator.lock.losses"))
	}
	if got := tel.Count(t, "curator.lock.hold.duration", attribute.String("curator.hold.end", "lost")); got != 2 {
		t.Errorf("holds ended lost = %d, want 2", got)
	}
	if got := tel.Sum(t, "curator.lock.holders"); got != 0 {
		t.Errorf("holders = %d after the losses, want 0", got)
	}
	if got := tel.Points(t, oldest); len(got) != 0 {
		t.Errorf("oldest holds = %v after the losses, want no series", got)
	}
	if got := tel.Sum(t, "curator.client.session_expirations", attribute.String("curator.expiry.source", "client")); got != 2 {
		t.Errorf("client-side session expirations = %d, want 2", got)
	}
	if !errors.Is(a.Release(ctx), locking.ErrLockLost) {
		t.Error("release of a lost hold did not say ErrLockLost")
	}
	proxy.Restore()
	testkit.WaitState(t, std, connstate.Reconnected)
	testkit.WaitState(t, sess, connstate.Reconnected)
}

// A revocable hold asked to release counts a loss "revoked"; one whose node
// is deleted under it, "node_deleted"; the release that follows neither.
func testTelemetryRevocation(t *testing.T, addr string) {
	tel := oteltest.New(t)
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, addr, ns, framework.WithMeterProvider(tel.Meters))
	admin := testkit.Connect(t, addr, ns)
	reason := func(r string) attribute.KeyValue { return attribute.String("curator.loss.reason", r) }

	h, err := locking.New(c, "/locks/revoked", mutexDriver).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	asked := make(chan struct{})
	locking.WatchRevocation(h, func() { close(asked) })
	if _, err := admin.Set(ctx, h.Node(), []byte(locking.RevokeMessage), -1); err != nil {
		t.Fatal(err)
	}
	testkit.WaitClosed(t, asked, "the revocation callback")
	if got := tel.Sum(t, "curator.lock.losses", reason("revoked")); got != 1 {
		t.Errorf("revoked losses = %d, want 1", got)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}

	h, err = locking.New(c, "/locks/deleted", mutexDriver).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	watching := make(chan struct{})
	locking.WatchRevocation(h, func() { close(watching) })
	// The node is deleted once the revocation watch is on it.
	testkit.AwaitWatch(t, addr, c, h.Node())
	if err := admin.Delete(ctx, h.Node()); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "a node_deleted loss", func() bool {
		return tel.Sum(t, "curator.lock.losses", reason("node_deleted")) == 1
	})
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if got := tel.Sum(t, "curator.lock.losses"); got != 2 {
		t.Errorf("losses = %d (%v), want 2", got, tel.Series(t, "curator.lock.losses"))
	}
	select {
	case <-watching:
		t.Error("a deletion was taken for a revocation")
	default:
	}
}

func eventNames(s sdktrace.ReadOnlySpan) map[string]bool {
	m := map[string]bool{}
	for _, e := range s.Events() {
		m[e.Name] = true
	}
	return m
}

func spanAttr(s sdktrace.ReadOnlySpan, key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}
