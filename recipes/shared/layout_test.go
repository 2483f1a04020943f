package shared_test

import (
	"errors"
	"testing"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/atomic"
	"github.com/gocurator/curator/recipes/shared"
)

// A Count on a DistributedAtomicLong's node (8 bytes: Curator's SharedCount
// reads the high half as the count) and a Value on a node an atomic handle
// writes (its writer children) refuse with ErrLayoutMismatch, at Start and
// Get, and write nothing. A Count and an atomic Int share one layout
// (tested in recipes/atomic).
func TestRefusesAtomicLayouts(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)

	long := atomic.NewLong(c, "/long")
	defer func() { _ = long.Close(ctx) }()
	if _, err := long.Add(ctx, 1<<40); err != nil { // 8 bytes and a writer child
		t.Fatal(err)
	}
	count := shared.NewCount(c, "/long", 0)
	defer func() { _ = count.Close() }()
	if _, err := count.Get(ctx); !errors.Is(err, shared.ErrLayoutMismatch) {
		t.Fatalf("Count.Get on an atomic long = %v; want ErrLayoutMismatch", err)
	}
	if err := count.Start(ctx); !errors.Is(err, shared.ErrLayoutMismatch) {
		t.Fatalf("Count.Start on an atomic long = %v; want ErrLayoutMismatch", err)
	}
	value := shared.NewValue(c, "/long", nil)
	defer func() { _ = value.Close() }()
	if _, err := value.GetVersioned(ctx); !errors.Is(err, shared.ErrLayoutMismatch) {
		t.Fatalf("Value.GetVersioned on an atomic long = %v; want ErrLayoutMismatch", err)
	}

	// A Long whose writer child is gone (Closed) still has 8 bytes.
	if err := long.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := count.Get(ctx); !errors.Is(err, shared.ErrLayoutMismatch) {
		t.Fatalf("Count.Get on a closed atomic long's node = %v; want ErrLayoutMismatch", err)
	}
	if v, err := atomic.NewLong(c, "/long").Get(ctx); err != nil || v != 1<<40 {
		t.Fatalf("the long after the refusals = %d, %v", v, err)
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, c)
}
