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

// A holder partitioned silently (no disconnect, only silence) must stop
// believing it holds before the server expires its session and the next in
// line acquires, under either error policy. Under the session policy this
// pins the late Done: it closed about 5/3 of the session timeout after the
// last frame (the client's read timeout, then a whole session timeout of
// Suspended), while the server expires the session about one session
// timeout after it, and the checker saw two holders at once.
func TestSilentPartitionOfHolder(t *testing.T) {
	for _, wl := range Workloads {
		t.Run(wl, func(t *testing.T) {
			t.Parallel()
			const st = 2 * time.Second
			proxy := zktest.NewProxy(t, zkAddr)
			ns := testkit.Unique(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			connect := func(addr string) *framework.Client {
				c, err := framework.Connect(ctx, addr, framework.WithSessionTimeout(st), framework.WithNamespace(ns),
					framework.WithErrorPolicy(policyOf(wl)),
					framework.WithRetryPolicy(retry.BoundedExponentialBackoff(50*time.Millisecond, time.Second, 30)))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				return c
			}
			ca, cb := connect(proxy.Addr()), connect(zkAddr)
			rec := newRecorder(time.Now(), wl)
			const lock = "/silent"
			mk := func(name string, client int, c *framework.Client, hold time.Duration) *worker {
				return &worker{name: name, workload: wl, recipe: RecipeLongMutex, lock: lock, client: client,
					c: c, rec: rec, st: st, holdFor: hold,
					acquire: lockerAcquire(mutex.New(c, lock)), rng: rand.New(rand.NewSource(1))}
			}
			a, b := mk("a", 0, ca, 3*st), mk("b", 1, cb, 100*time.Millisecond)

			acquired := rec.nextHolder(lock)
			aDone := make(chan struct{})
			go func() {
				defer close(aDone)
				a.once(ctx)
			}()
			select {
			case <-acquired:
			case <-ctx.Done():
				t.Fatal("a never acquired")
			}
			proxy.BlackHole()
			partitioned := time.Now()
			b.once(ctx) // waits for a's session to expire, then holds briefly
			<-aDone
			proxy.Restore()

			h := rec.history(time.Now())
			if len(h.Intervals) != 2 {
				t.Fatalf("intervals %+v, want a's and b's", h.Intervals)
			}
			for _, iv := range h.Intervals {
				t.Logf("%s held from %v to %v after the partition (ended by Done: %v)", iv.Holder,
					iv.Start.Sub(partitioned).Round(time.Millisecond), iv.End.Sub(partitioned).Round(time.Millisecond), iv.Lost)
			}
			for _, v := range Check(h, time.Hour) {
				t.Errorf("%s policy, silent partition of the holder: %v", wl, v)
			}
		})
	}
}
