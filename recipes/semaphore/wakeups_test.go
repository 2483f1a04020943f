package semaphore_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/locking"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/recipes/shared"
)

// wakeups is how often the waiter of these tests is woken: enough that a
// goroutine per wake-up stands out from the few an acquire needs.
const wakeups = 50

// goroutineSlack is how many goroutines a waiting acquire, its watches
// and the requests still in flight may add, whatever the number of
// wake-ups.
const goroutineSlack = 15

// sortedLeases lists the V1 lease nodes of path through c in queue order.
func sortedLeases(t testing.TB, c *framework.Client, path string) []string {
	t.Helper()
	return locking.SortChildren(testkit.Children(t, c, path), func(n string) (int32, bool) { return locking.Sequence(n, "lock-") })
}

// A V1 acquire with its maximum from a SharedCount waits while the 50
// waiters queued ahead of it leave one by one: each departure wakes it
// (it watches the node right ahead), and it must not keep a goroutine per
// wake-up until it ends. Not parallel: it counts the process's goroutines.
func TestV1WaiterGoroutinesDoNotGrowWithWakeups(t *testing.T) {
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	checker := testkit.Connect(t, zkAddr, ns)
	holder, err := semaphore.New(testkit.Connect(t, zkAddr, ns), semPath, 1, v1()...).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ahead := semaphore.New(testkit.Connect(t, zkAddr, ns), semPath, 1, v1()...)
	wc := testkit.Connect(t, zkAddr, ns)
	count := shared.NewCount(wc, maxPath, 1)
	t.Cleanup(func() { _ = count.Close() })
	if err := count.Start(ctx); err != nil {
		t.Fatal(err)
	}
	waiter := semaphore.New(wc, semPath, 0, v1(semaphore.WithMaxLeasesFrom(count))...)
	before := runtime.NumGoroutine()

	cancels := make([]context.CancelFunc, wakeups)
	results := make([]<-chan result, wakeups)
	for i := range wakeups {
		actx, cancel := context.WithCancel(ctx)
		defer cancel()
		cancels[i], results[i] = cancel, acquireAsync(actx, ahead)
		waitCount(t, checker, semPath, i+2) // queued in this order
	}
	w := acquireAsync(ctx, waiter)
	waitCount(t, checker, semPath, wakeups+2)
	queue := sortedLeases(t, checker, semPath) // holder, the waiters ahead, w
	if len(queue) != wakeups+2 {
		t.Fatalf("queue %v, want %d lease nodes", queue, wakeups+2)
	}
	awaitWatch := func(node string) { testkit.AwaitWatch(t, zkAddr, wc, semPath+"/"+node) }
	awaitWatch(queue[wakeups])

	// The last one ahead leaves, w wakes and watches the next: one wake-up
	// per departure, each seen on the server before the next.
	for i := wakeups; i >= 1; i-- {
		cancels[i-1]()
		if r := await(t, results[i-1]); !errors.Is(r.err, context.Canceled) {
			t.Fatalf("waiter %d ahead: %v, %v; want Canceled", i, r.lease, r.err)
		}
		awaitWatch(queue[i-1])
	}
	pending(t, w, "w behind the holder")
	grown := runtime.NumGoroutine() - before
	t.Logf("%d goroutines more after %d wake-ups", grown, wakeups)
	if grown > goroutineSlack {
		t.Fatalf("%d goroutines more after %d wake-ups of one waiting acquire, want at most %d (one per wake-up leaks)",
			grown, wakeups, goroutineSlack)
	}

	mustRelease(t, holder)
	r := await(t, w)
	if r.err != nil {
		t.Fatal(r.err)
	}
	mustRelease(t, r.lease)
}

// The same under changes of the maximum: 50 changes that wake the waiter
// without letting it in. V2 too: its waiter lists leases/ again at every
// change of the maximum and must not arm a new children watch (a goroutine
// each, in a namespace, until leases/ changes) while its last one is still
// pending. Not parallel: it counts the process's goroutines.
func TestWaiterGoroutinesDoNotGrowWithMaxChanges(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			ns := testkit.Unique(t)
			if !m.v2 {
				// The V1 lock loop (recipes/locking) arms a getData watch
				// per look; in a namespace each costs a goroutine until
				// the node changes. That is the loop's, not this test's
				// subject: without a namespace the watches cost none.
				ns = ""
			}
			path := semPath
			if ns == "" {
				path = "/" + testkit.Unique(t) + semPath
			}
			ctx := testkit.Ctx(t)
			admin := shared.NewCount(testkit.Connect(t, zkAddr, ns), path+"-max", 1)
			t.Cleanup(func() { _ = admin.Close() })
			holder, err := semaphore.New(testkit.Connect(t, zkAddr, ns), path, 1, m.opts...).Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			wc := testkit.Connect(t, zkAddr, ns)
			count := shared.NewCount(wc, path+"-max", 1)
			t.Cleanup(func() { _ = count.Close() })
			if err := count.Start(ctx); err != nil {
				t.Fatal(err)
			}
			w := acquireAsync(ctx, semaphore.New(wc, path, 0, m.with(semaphore.WithMaxLeasesFrom(count))...))
			waitCount(t, wc, m.leaseDir(path), 2)
			before := runtime.NumGoroutine()

			// set sets the maximum to v and waits until the waiter's count
			// has it: the waiter has been woken by the change.
			set := func(v int) {
				t.Helper()
				if err := admin.Set(ctx, v); err != nil {
					t.Fatal(err)
				}
				for {
					cur, changed := count.Watch()
					if cur.Value == v {
						return
					}
					testkit.WaitClosed(t, changed, fmt.Sprintf("the waiter's count to reach %d", v))
				}
			}
			// 1 and 0 both keep w out (the holder has the one lease).
			for i := range wakeups {
				set(i % 2)
			}
			set(1)
			pending(t, w, "w with max 1 and the lease held")
			grown := runtime.NumGoroutine() - before
			t.Logf("%d goroutines more after %d changes of the maximum", grown, wakeups)
			if grown > goroutineSlack {
				t.Fatalf("%d goroutines more after %d changes of the maximum, want at most %d",
					grown, wakeups, goroutineSlack)
			}
			mustRelease(t, holder)
			r := await(t, w)
			if r.err != nil {
				t.Fatal(r.err)
			}
			mustRelease(t, r.lease)
		})
	}
}

// A wake-up is not the condition (issue 33's class, GH-1290's pattern): a
// V2 waiter, the gate holder waiting on leases/, is cut off long enough
// for its gate hold to end (Suspended), and the connection comes back
// while the one lease is still held elsewhere. The reconnect must not
// admit it: it starts over with a new lease node and counts again. A
// waiter that took the reconnect for a release would return without a new
// lease node: that fails the wait below at once.
func TestV2WaiterNotAdmittedByReconnect(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	other := testkit.Connect(t, zkAddr, ns)
	holder, err := semaphore.New(other, semPath, 1).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newProxy(t)
	wc := testkit.Connect(t, proxy.Addr(), ns, framework.WithSessionTimeout(4*time.Second))
	w := acquireAsync(ctx, semaphore.New(wc, semPath, 1))
	leases := semPath + "/leases"
	notReturned := func(ch []string) {
		select {
		case r := <-w:
			t.Fatalf("the waiter returned %v, %v with the one lease held elsewhere (leases/: %v)", r.lease, r.err, ch)
		default:
		}
	}
	waitChildren(t, other, leases, "the waiter's lease node", func(ch []string) bool { notReturned(ch); return len(ch) == 2 })
	var first string
	for _, n := range testkit.Children(t, other, leases) {
		if semPath+"/leases/"+n != holder.Node() {
			first = n
		}
	}

	proxy.Cut()
	testkit.WaitState(t, wc, connstate.Suspended)
	proxy.Restore()
	waitChildren(t, other, leases, "the waiter's new lease node", func(ch []string) bool {
		notReturned(ch)
		return len(ch) == 2 && !slices.Contains(ch, first)
	})
	pending(t, w, "the waiter after a reconnect, with the one lease held elsewhere")

	mustRelease(t, holder)
	r := await(t, w)
	if r.err != nil {
		t.Fatal(r.err)
	}
	mustRelease(t, r.lease)
}
