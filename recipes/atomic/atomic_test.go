package atomic_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/atomic"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/zktest"
	"golang.org/x/sync/errgroup"
)

const counterPath = "/counters/hits"

func TestLongVerbs(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	l := atomic.NewLong(c, counterPath)

	if v, err := l.Get(ctx); v != 0 || err != nil {
		t.Fatalf("Get of a missing node = %d, %v; want 0", v, err)
	}
	if ok, err := l.Initialize(ctx, 10); !ok || err != nil {
		t.Fatalf("Initialize = %v, %v", ok, err)
	}
	if ok, err := l.Initialize(ctx, 99); ok || err != nil {
		t.Fatalf("second Initialize = %v, %v; want false", ok, err)
	}
	if v, err := l.Add(ctx, 5); v != 15 || err != nil {
		t.Fatalf("Add = %d, %v", v, err)
	}
	r, err := l.Increment(ctx)
	if err != nil || !r.Succeeded || r.PreValue != 15 || r.PostValue != 16 || r.Stats.OptimisticTries != 1 || r.Stats.PromotedTries != 0 {
		t.Fatalf("Increment = %+v, %v", r, err)
	}
	if r, err := l.Decrement(ctx); err != nil || r.PostValue != 15 {
		t.Fatalf("Decrement = %+v, %v", r, err)
	}
	if r, err := l.Subtract(ctx, 20); err != nil || r.PostValue != -5 {
		t.Fatalf("Subtract = %+v, %v", r, err)
	}
	if r, err := l.CompareAndSet(ctx, 7, 100); err != nil || r.Succeeded || r.PreValue != -5 {
		t.Fatalf("CompareAndSet with a wrong expectation = %+v, %v", r, err)
	}
	if r, err := l.CompareAndSet(ctx, -5, 100); err != nil || !r.Succeeded || r.PostValue != 100 {
		t.Fatalf("CompareAndSet = %+v, %v", r, err)
	}
	if r, err := l.TrySet(ctx, 42); err != nil || !r.Succeeded || r.PreValue != 100 || r.PostValue != 42 {
		t.Fatalf("TrySet = %+v, %v", r, err)
	}
	if err := l.ForceSet(ctx, -1); err != nil {
		t.Fatal(err)
	}
	if v, err := l.Get(ctx); v != -1 || err != nil {
		t.Fatalf("Get = %d, %v", v, err)
	}
	data, _, err := c.Get(ctx, counterPath)
	if err != nil || !bytes.Equal(data, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}) {
		t.Fatalf("node data %x, %v; want Curator's 8 bytes", data, err)
	}

	// A missing node never matches a compare-and-set (Curator's rule).
	m := atomic.NewLong(c, "/counters/missing")
	if r, err := m.CompareAndSet(ctx, 0, 1); err != nil || r.Succeeded {
		t.Fatalf("CompareAndSet on a missing node = %+v, %v", r, err)
	}
	// ForceSet makes a missing node, parents as containers.
	f := atomic.NewLong(c, "/deep/er/counter")
	if err := f.ForceSet(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if v, err := f.Get(ctx); v != 3 || err != nil {
		t.Fatalf("Get = %d, %v", v, err)
	}
}

func TestIntAndValue(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	i := atomic.NewInt(c, "/ints/a")
	if v, err := i.Add(ctx, -3); v != -3 || err != nil {
		t.Fatalf("Add = %d, %v", v, err)
	}
	data, _, err := c.Get(ctx, "/ints/a")
	if err != nil || !bytes.Equal(data, []byte{0xff, 0xff, 0xff, 0xfd}) {
		t.Fatalf("int node data %x, %v; want 4 bytes", data, err)
	}

	v := atomic.NewValue(c, "/values/a")
	if b, err := v.Get(ctx); b != nil || err != nil {
		t.Fatalf("Get of a missing value = %q, %v", b, err)
	}
	if r, err := v.TrySet(ctx, []byte("one")); err != nil || !r.Succeeded || r.PreValue != nil || string(r.PostValue) != "one" {
		t.Fatalf("TrySet = %+v, %v", r, err)
	}
	if r, err := v.CompareAndSet(ctx, []byte("two"), []byte("three")); err != nil || r.Succeeded {
		t.Fatalf("CompareAndSet with a wrong expectation = %+v, %v", r, err)
	}
	if r, err := v.CompareAndSet(ctx, []byte("one"), []byte("two")); err != nil || !r.Succeeded {
		t.Fatalf("CompareAndSet = %+v, %v", r, err)
	}
	if err := v.ForceSet(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if b, err := v.Get(ctx); len(b) != 0 || err != nil {
		t.Fatalf("Get after ForceSet(nil) = %q, %v; want empty, not the default data", b, err)
	}
}

// Data shorter than the number is Curator's corruption error, for reads
// and for updates, which then write nothing.
func TestMalformedData(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	if _, err := c.Create(ctx, "/bad", []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	l := atomic.NewLong(c, "/bad")
	if _, err := l.Get(ctx); !errors.Is(err, atomic.ErrMalformed) {
		t.Fatalf("Get = %v; want ErrMalformed", err)
	}
	if _, err := l.Add(ctx, 1); !errors.Is(err, atomic.ErrMalformed) {
		t.Fatalf("Add = %v; want ErrMalformed", err)
	}
	if _, err := atomic.NewInt(c, "/bad").Get(ctx); !errors.Is(err, atomic.ErrMalformed) {
		t.Fatalf("Int Get = %v; want ErrMalformed", err)
	}
	if data, _, _ := c.Get(ctx, "/bad"); !bytes.Equal(data, []byte{1, 2, 3}) {
		t.Fatalf("data changed to %x", data)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	if _, err := atomic.NewLong(nil, "/a").Get(ctx); !errors.Is(err, atomic.ErrNilClient) {
		t.Fatalf("nil client: %v", err)
	}
	for _, p := range []string{"", "/", "a", "/a/"} {
		if _, err := atomic.NewLong(c, p).Add(ctx, 1); !errors.Is(err, atomic.ErrInvalidPath) {
			t.Fatalf("path %q: %v", p, err)
		}
	}
	if _, err := atomic.NewLong(c, "/a", atomic.PromotedToLock("x")).Add(ctx, 1); !errors.Is(err, atomic.ErrInvalidPath) {
		t.Fatalf("bad lock path: %v", err)
	}
	var l *atomic.Long
	if _, err := l.Add(ctx, 1); !errors.Is(err, atomic.ErrNilHandle) {
		t.Fatalf("nil handle: %v", err)
	}
	var v *atomic.Value
	if _, err := v.Get(ctx); !errors.Is(err, atomic.ErrNilHandle) {
		t.Fatalf("nil value: %v", err)
	}
}

// No lost update under contention: handles on separate sessions add
// concurrently, and the sum is exact.
func TestNoLostUpdateUnderContention(t *testing.T) {
	t.Parallel()
	const writers, each = 8, 40
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	g, gctx := errgroup.WithContext(ctx)
	for w := 0; w < writers; w++ {
		l := atomic.NewLong(testkit.Connect(t, zkAddr, ns), counterPath, atomic.WithRetryPolicy(retry.NTimes(1000, time.Millisecond)))
		g.Go(func() error {
			for i := 0; i < each; i++ {
				if _, err := l.Add(gctx, 1); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	got, err := atomic.NewLong(testkit.Connect(t, zkAddr, ns), counterPath).Get(ctx)
	if err != nil || got != writers*each {
		t.Fatalf("sum %d, %v; want %d", got, err, writers*each)
	}
}

// A conflict on every optimistic try, with a policy of no retries, is a
// Result that did not succeed (nil error), and Add's ErrNotApplied; the
// tries are counted as Curator counts them.
func TestContentionOutlastingThePolicy(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	other := atomic.NewLong(testkit.Connect(t, zkAddr, ns), counterPath)
	l := atomic.NewLong(c, counterPath, atomic.WithRetryPolicy(retry.NTimes(2, 0)))
	atomic.SetBeforeWrite(l, func(bool) {
		if _, err := other.Add(ctx, 100); err != nil {
			t.Error(err)
		}
	})
	r, err := l.Increment(ctx)
	if err != nil || r.Succeeded || r.Stats.OptimisticTries != 3 || r.Stats.PromotedTries != 0 {
		t.Fatalf("Increment = %+v, %v; want not succeeded after 3 tries", r, err)
	}
	if _, err := l.Add(ctx, 1); !errors.Is(err, atomic.ErrNotApplied) {
		t.Fatalf("Add = %v; want ErrNotApplied", err)
	}
	if got, _ := other.Get(ctx); got != 600 {
		t.Fatalf("value %d; want the other writer's 600 alone", got)
	}
}

// The lost reply of a versioned write: the write reaches the server and
// is applied, the reply is lost with the connection, the client retries on
// reconnection and the server refuses the retry on the version the first
// attempt moved. Curator 5.4 then reads again and adds again: one
// increment counted twice. The stamp on the writer child tells the update
// it was applied: counted once.
func TestLostReplyIsNotAppliedTwice(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns)
	l := atomic.NewLong(c, counterPath)
	if err := l.ForceSet(ctx, 10); err != nil {
		t.Fatal(err)
	}
	// One way takes 100ms: the request is on the server at ~100ms, its
	// reply in the proxy until ~200ms, and the cut at 150ms drops it.
	const oneWay = 100 * time.Millisecond
	cut := make(chan struct{})
	armed := false
	atomic.SetBeforeWrite(l, func(bool) {
		if armed {
			return
		}
		armed = true
		proxy.SetDelay(oneWay)
		time.AfterFunc(oneWay*3/2, func() {
			proxy.Cut()
			proxy.SetDelay(0)
			proxy.Restore()
			close(cut)
		})
	})
	r, err := l.Increment(ctx)
	<-cut
	if err != nil || !r.Succeeded || r.PostValue != 11 {
		t.Fatalf("Increment = %+v, %v", r, err)
	}
	if got, err := atomic.NewLong(testkit.Connect(t, zkAddr, ns), counterPath).Get(ctx); got != 11 || err != nil {
		t.Fatalf("value %d, %v after one increment whose reply was lost; want 11", got, err)
	}
	if r.Stats.OptimisticTries != 1 {
		t.Fatalf("tries %+v; want the one try, settled by its stamp", r.Stats)
	}
}

// An unclosed handle's writer child is ephemeral: it goes with the session, and nothing
// else is left on the server but the value.
func TestNothingLeftBehind(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	c, err := framework.Connect(ctx, zkAddr, framework.WithNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	l := atomic.NewLong(c, counterPath)
	if _, err := l.Add(ctx, 1); err != nil {
		t.Fatal(err)
	}
	watcher := testkit.Connect(t, zkAddr, ns)
	if kids := testkit.Children(t, watcher, counterPath); len(kids) != 1 || "/counters/hits/"+kids[0] != atomic.WriterPath(l) {
		t.Fatalf("children %v; want the writer child %s", kids, atomic.WriterPath(l))
	}
	if n := testkit.WatchCount(t, zkAddr, c); n != 0 {
		t.Fatalf("%d watches left", n)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if kids := testkit.Children(t, watcher, counterPath); len(kids) != 0 {
		t.Fatalf("children %v after the session ended", kids)
	}
	if got, _ := atomic.NewLong(watcher, counterPath).Get(context.Background()); got != 1 {
		t.Fatalf("value %d", got)
	}
}
