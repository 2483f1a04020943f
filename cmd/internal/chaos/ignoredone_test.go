package chaos

import (
	"context"
	"math/rand"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/zktest"
)

// The checker catches a holder that ignores Done: A holds the mutex through a
// cut longer than its session, B acquires once A's session expires, and A's
// belief (until its Release) overlaps B's hold.
func TestCheckerCatchesIgnoredDone(t *testing.T) {
	const st = 2 * time.Second
	proxy := zktest.NewProxy(t, zkAddr)
	ns := testkit.Unique(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	connect := func(addr string) *framework.Client {
		c, err := framework.Connect(ctx, addr, framework.WithSessionTimeout(st), framework.WithNamespace(ns),
			framework.WithRetryPolicy(retry.BoundedExponentialBackoff(50*time.Millisecond, time.Second, 30)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	ca, cb := connect(proxy.Addr()), connect(zkAddr)
	rec := newRecorder(time.Now())
	mk := func(name string, c *framework.Client) *worker {
		return &worker{name: name, recipe: RecipeMutex, c: c, rec: rec, st: st,
			acquire: lockerAcquire(mutex.New(c, "/ignored-done")), rng: rand.New(rand.NewSource(1))}
	}
	a, b := mk("a", ca), mk("b", cb)
	a.ignoreDone, a.holdFor = true, 3*st

	aDone := make(chan struct{})
	go func() {
		defer close(aDone)
		a.once(ctx)
	}()
	testkit.Eventually(t, "a acquired", func() bool { return !rec.lastMutexStart().IsZero() })
	proxy.Cut()
	b.once(ctx) // waits for a's session to expire, then holds briefly
	<-aDone
	proxy.Restore()

	h := rec.history(time.Now())
	if len(h.Intervals) != 2 {
		t.Fatalf("intervals %+v, want a's and b's", h.Intervals)
	}
	vs := Check(h, time.Hour)
	if len(vs) == 0 || vs[0].Kind != ViolationMutex {
		t.Fatalf("violations %v, want %s", vs, ViolationMutex)
	}
	t.Logf("flagged: %v", vs[0])
}
