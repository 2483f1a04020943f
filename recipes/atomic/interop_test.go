package atomic_test

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/atomic"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/zktest"
)

// cutEvery is the period of the cuts of the Go clients' connections.
var cutEvery = time.Second

var increments = flag.Int("atomic.increments", 25, "increments per client in TestInteropSixteenWritersWithCuts (make atomic-stress runs 10000)")

// Values written by Curator's DistributedAtomicLong, Integer and Value read
// the same in Go, and ours read the same in Java; Curator's results have
// the shape of ours. Java uses full paths: no namespace, a path unique to
// the test instead.
func TestInteropValuesBothWays(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	base := "/interop/" + testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, "")
	java := curatorjava.StartDriver(t, zkAddr)
	expect := func(cmd, want string) {
		t.Helper()
		if got := java.MustDo(cmd); got != want {
			t.Fatalf("%s: got %q, want %q", cmd, got, want)
		}
	}

	lp := base + "/long"
	java.MustDo("along jl " + lp)
	l := atomic.NewLong(c, lp)
	expect("aget jl", "0")
	expect("aadd jl -9000000000", "true 0 -9000000000 1 0")
	if v, err := l.Get(ctx); v != -9000000000 || err != nil {
		t.Fatalf("Go read Java's long as %d, %v", v, err)
	}
	if v, err := l.Add(ctx, 9000000042); v != 42 || err != nil {
		t.Fatalf("Add = %d, %v", v, err)
	}
	expect("aget jl", "42")
	expect("acas jl 42 7", "true 42 7 0 0") // Curator counts no try for a compare-and-set; we count its one
	if r, err := l.CompareAndSet(ctx, 42, 8); err != nil || r.Succeeded || r.PreValue != 7 {
		t.Fatalf("CompareAndSet on Java's write = %+v, %v", r, err)
	}
	if err := l.ForceSet(ctx, 1<<62); err != nil {
		t.Fatal(err)
	}
	expect("aget jl", fmt.Sprint(int64(1)<<62))
	expect("ainit jl 5", "false")

	ip := base + "/int"
	java.MustDo("aint ji " + ip)
	i := atomic.NewInt(c, ip)
	if ok, err := i.Initialize(ctx, -77); !ok || err != nil {
		t.Fatalf("Initialize = %v, %v", ok, err)
	}
	expect("aget ji", "-77")
	expect("aadd ji 2147483647", "true -77 2147483570 1 0")
	if v, err := i.Get(ctx); v != 2147483570 || err != nil {
		t.Fatalf("Go read Java's int as %d, %v", v, err)
	}

	vp := base + "/value"
	java.MustDo("avalue jv " + vp)
	v := atomic.NewValue(c, vp)
	expect("atrySet jv hello", "true null hello 1 0")
	if b, err := v.Get(ctx); string(b) != "hello" || err != nil {
		t.Fatalf("Go read Java's value as %q, %v", b, err)
	}
	if r, err := v.CompareAndSet(ctx, []byte("hello"), []byte("world")); !r.Succeeded || err != nil {
		t.Fatalf("CompareAndSet = %+v, %v", r, err)
	}
	expect("aget jv", "world")
}

// Eight Go and eight Java clients increment one counter, each *increments
// times (a Go client's by 4 goroutines, whose adds are combined), while the Go clients' connections are cut again and again: the
// counter ends exactly at 16 times that. The Go clients go through a proxy
// that cuts them; the Java clients connect straight to the server, because
// Curator 5.4 counts an increment twice when the reply to its write is lost
// (see TestLostReplyIsNotAppliedTwice), which cuts make happen.
func TestInteropSixteenWritersWithCuts(t *testing.T) {
	const clients, perClient = 8, 4
	n := *increments
	// Sixteen contending clients on a shared two-core machine: more time
	// than testkit.Deadline, and an hour for the full size.
	wait := 2 * time.Minute
	if n > 1000 {
		wait = time.Hour
	}
	ctx := contextWithDeadline(t, wait)
	path := "/interop/" + testkit.Unique(t) + "/counter"
	proxy := zktest.NewProxy(t, zkAddr)
	java := curatorjava.StartDriver(t, zkAddr)
	start := time.Now()
	java.MustDo(fmt.Sprintf("ahammer h %s %s %d %d", zkAddr, path, clients, n))

	stop := make(chan struct{})
	var cuts sync.WaitGroup
	cutCount := 0
	cuts.Add(1)
	go func() {
		defer cuts.Done()
		tick := time.NewTicker(cutEvery)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				proxy.Cut()
				cutCount++
				proxy.Restore()
			}
		}
	}()
	g, gctx := errgroup.WithContext(ctx)
	for w := 0; w < clients; w++ {
		l := atomic.NewLong(testkit.Connect(t, proxy.Addr(), ""), path, atomic.WithRetryPolicy(retry.NTimes(10, time.Millisecond)))
		// Each Go client's increments are made by goroutines sharing
		// its handle, whose adds are combined into shared writes.
		for j := 0; j < perClient; j++ {
			g.Go(func() error {
				for k := j; k < n; k += perClient {
					for {
						_, err := l.Add(gctx, 1)
						if err == nil {
							break
						}
						if !errors.Is(err, atomic.ErrNotApplied) {
							return err
						}
					}
				}
				return nil
			})
		}
	}
	err := g.Wait()
	close(stop)
	cuts.Wait()
	if err != nil {
		t.Fatal(err)
	}
	goDone := time.Since(start)
	ev, err := waitPrefix(java, "hammer h ", wait)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ev, "hammer h done ") {
		t.Fatalf("Java: %s", ev)
	}
	t.Logf("Java: %s (increments, tries that did not succeed)", ev)
	t.Logf("%d increments by 16 clients, %d cuts of the Go clients: Go done in %v, all in %v",
		16*n, cutCount, goDone.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	got, err := atomic.NewLong(testkit.Connect(t, zkAddr, ""), path).Get(ctx)
	if err != nil || got != int64(16*n) {
		t.Fatalf("counter %d, %v; want exactly %d", got, err, 16*n)
	}
}

// Promoted writers of both languages take Curator's InterProcessMutex at
// the lock path: a Go update promoted while Java holds the lock waits for
// it, and Java cannot take the lock while a Go update holds it.
func TestInteropPromotedToLockExcludesJava(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	base := "/interop/" + testkit.Unique(t)
	path, lockPath := base+"/counter", base+"/lock"
	c := testkit.Connect(t, zkAddr, "")
	other := atomic.NewLong(testkit.Connect(t, zkAddr, ""), path)
	java := curatorjava.StartDriver(t, zkAddr)

	// Every optimistic try of l meets a write by another client, so it is
	// promoted at once (no optimistic retries).
	hold := make(chan struct{})
	inLock := make(chan struct{}, 1)
	l := atomic.NewLong(c, path, atomic.PromotedToLock(lockPath), atomic.WithRetryPolicy(retry.NTimes(0, 0)))
	atomic.SetBeforeWrite(l, func(promoted bool) {
		if !promoted {
			if _, err := other.Add(ctx, 100); err != nil {
				t.Error(err)
			}
			return
		}
		select {
		case inLock <- struct{}{}:
			<-hold
		default:
		}
	})

	// Java holds the lock: the promoted Go update queues behind it.
	java.MustDo("mutex jm " + lockPath)
	if got := java.MustDo("acquire jm -1"); got != "true" {
		t.Fatalf("Java acquire: %s", got)
	}
	type result struct {
		r   atomic.Result[int64]
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := l.Increment(ctx)
		done <- result{r, err}
	}()
	m := mutex.New(c, lockPath)
	testkit.Eventually(t, "the Go update queued on the lock", func() bool {
		ps, err := m.Participants(ctx)
		return err == nil && len(ps) == 2
	})
	select {
	case <-inLock:
		t.Fatal("promoted try ran while Java held the lock")
	default:
	}
	java.MustDo("release jm")
	select {
	case <-inLock:
	case <-time.After(testkit.Deadline):
		t.Fatal("promoted try never ran")
	}
	// Now Go holds the lock inside its promoted try: Java cannot have it.
	if got := java.MustDo("acquire jm 300"); got != "false" {
		t.Fatalf("Java acquired the lock a Go promoted writer held: %s", got)
	}
	close(hold)
	r := <-done
	if r.err != nil || !r.r.Succeeded || r.r.Stats.OptimisticTries != 1 || r.r.Stats.PromotedTries != 1 || r.r.PostValue != 101 {
		t.Fatalf("Increment = %+v, %v", r.r, r.err)
	}
	if got := java.MustDo("acquire jm 10000"); got != "true" {
		t.Fatalf("Java acquire after Go released: %s", got)
	}
	java.MustDo("release jm")
	testkit.Eventually(t, "the lock path emptied", func() bool { return len(testkit.Children(t, c, lockPath)) == 0 })
}
