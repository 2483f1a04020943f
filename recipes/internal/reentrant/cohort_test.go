package reentrant_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/internal/reentrant"
	"github.com/gocurator/curator/recipes/locking"
	"github.com/gocurator/curator/zktest"
)

// The lock of these tests, a mutex's.
const queuePath = "/locks/orders"

var driver = locking.StandardDriver{LockName: "lock-"}

// A local hand-over handle granted just as the connection drops must not
// stay held: the grant's hold ended (Suspended, standard policy) before the
// cohort subscribed to its end. Before the fix the cohort installed the
// dead hold, Acquire returned nil and the handle stayed held with Done
// open for good, and every other local waiter queued behind it. The test
// hook holds the grant in exactly that window until the client is
// Suspended, so the race is not left to chance.
func TestCohortGrantLostBeforeInstall(t *testing.T) {
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	a := testkit.Connect(t, proxy.Addr(), ns, framework.WithSessionTimeout(4*time.Second))
	other := testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)

	// Another process holds; two local handles of a wait behind it.
	blocker, err := locking.New(other, queuePath, driver).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l := locking.New(a, queuePath, driver)
	handles := []*reentrant.Handle{
		reentrant.New(l, driver, "test", reentrant.Hooks{LocalHandover: 4}),
		reentrant.New(l, driver, "test", reentrant.Hooks{LocalHandover: 4}),
	}
	got := make(chan error, len(handles))
	for _, r := range handles {
		go func() { got <- r.Acquire(ctx) }()
	}
	testkit.Eventually(t, "a's node queued behind the holder", func() bool {
		return len(testkit.Children(t, other, queuePath)) == 2
	})

	cut := make(chan struct{})
	restore := reentrant.SetTestHookGranted(func(g *locking.Hold) {
		defer close(cut)
		proxy.Cut()
		testkit.WaitState(t, a, connstate.Suspended)
		testkit.WaitClosed(t, g.Done(), "the grant's hold to end")
	})
	defer restore()
	if err := blocker.Release(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.WaitClosed(t, cut, "the grant to reach the cohort")
	for range handles {
		if err := <-got; !errors.Is(err, locking.ErrLockLost) {
			t.Errorf("local waiter's Acquire: %v, want ErrLockLost", err)
		}
	}
	for i, r := range handles {
		if r.IsHeld() {
			t.Errorf("handle %d is held after its grant was lost", i)
		}
		select {
		case <-r.Done():
		default:
			t.Errorf("handle %d: Done open after its grant was lost", i)
		}
	}
	restore()
	proxy.Restore()
	testkit.Eventually(t, "no lock node left", func() bool { return len(testkit.Children(t, other, queuePath)) == 0 })
	// The handles work again once the connection is back.
	if err := handles[0].Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if err := handles[0].Release(ctx); err != nil {
		t.Fatal(err)
	}
}
