package barrier_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/barrier"
)

func TestBarrierSetWaitRemove(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	admin := testkit.Connect(t, zkAddr, ns)
	waiter := testkit.Connect(t, zkAddr, ns)
	b := barrier.New(admin, "/gates/deploy")

	// Open: Wait returns at once.
	if err := barrier.New(waiter, "/gates/deploy").Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Set(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Set(ctx); err != nil {
		t.Fatalf("second Set: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- barrier.New(waiter, "/gates/deploy").Wait(ctx) }()
	testkit.AwaitWatch(t, zkAddr, waiter, "/gates/deploy")
	select {
	case err := <-done:
		t.Fatalf("Wait returned %v while the barrier was set", err)
	default:
	}
	if err := b.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(testkit.Deadline):
		t.Fatal("Wait did not return after Remove")
	}
	if err := b.Remove(ctx); err != nil {
		t.Fatalf("second Remove: %v", err)
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, waiter)
}

func TestBarrierWaitHonoursCtx(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	b := barrier.New(c, "/gate")
	if err := b.Set(ctx); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := b.Wait(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait = %v; want DeadlineExceeded", err)
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, c)
	if err := b.Remove(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	if err := barrier.New(nil, "/a").Set(ctx); !errors.Is(err, barrier.ErrNilClient) {
		t.Fatalf("nil client: %v", err)
	}
	for _, p := range []string{"", "/", "a/b", "/a/"} {
		if err := barrier.New(c, p).Wait(ctx); !errors.Is(err, barrier.ErrInvalidPath) {
			t.Fatalf("path %q: %v", p, err)
		}
		if err := barrier.NewDouble(c, p, 2).Enter(ctx); !errors.Is(err, barrier.ErrInvalidPath) {
			t.Fatalf("double path %q: %v", p, err)
		}
	}
	if err := barrier.NewDouble(c, "/d", 0).Enter(ctx); !errors.Is(err, barrier.ErrInvalidCount) {
		t.Fatalf("n=0: %v", err)
	}
	if err := barrier.NewDouble(c, "/d", 1).Leave(ctx); !errors.Is(err, barrier.ErrNotEntered) {
		t.Fatalf("Leave before Enter: %v", err)
	}
	var b *barrier.Barrier
	if err := b.Wait(ctx); !errors.Is(err, barrier.ErrNilHandle) {
		t.Fatalf("nil barrier: %v", err)
	}
	var d *barrier.Double
	if err := d.Enter(ctx); !errors.Is(err, barrier.ErrNilHandle) {
		t.Fatalf("nil double: %v", err)
	}
}
