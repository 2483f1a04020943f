package shared_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/shared"
)

// A started count re-arms its watch at every change it follows; the
// goroutines it holds (its watch loop, one pending watch, a listener)
// must not grow with the number of changes. Not parallel: it counts the
// process's goroutines.
func TestGoroutinesDoNotGrowWithChanges(t *testing.T) {
	const (
		changes = 50
		slack   = 10 // requests and watch deliveries in flight
	)
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	admin := shared.NewCount(testkit.Connect(t, zkAddr, ns), countPath, 0)
	follower := shared.NewCount(testkit.Connect(t, zkAddr, ns), countPath, 0)
	t.Cleanup(func() { _ = follower.Close() })
	if err := follower.Start(ctx); err != nil {
		t.Fatal(err)
	}
	heard := make(chan int, changes)
	cancel := follower.Listen(func(v int) { heard <- v })
	defer cancel()
	before := runtime.NumGoroutine()
	for i := 1; i <= changes; i++ {
		if err := admin.Set(ctx, i); err != nil {
			t.Fatal(err)
		}
		waitValue(t, follower, i)
	}
	grown := runtime.NumGoroutine() - before
	t.Logf("%d goroutines more after %d changes", grown, changes)
	if grown > slack {
		t.Fatalf("%d goroutines more after %d changes followed, want at most %d", grown, changes, slack)
	}
	timer := time.NewTimer(testkit.Deadline)
	defer timer.Stop()
	for i := 1; i <= changes; i++ {
		select {
		case v := <-heard:
			if v != i {
				t.Fatalf("listener heard %d, want %d", v, i)
			}
		case <-timer.C:
			t.Fatalf("listener never heard %d", i)
		}
	}
}
