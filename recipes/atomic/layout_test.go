package atomic_test

import (
	"errors"
	"testing"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/atomic"
	"github.com/gocurator/curator/recipes/shared"
)

// An atomic Long on a SharedCount's node (4 bytes) and an atomic Int on a
// Long's node (8 bytes) refuse with ErrLayoutMismatch rather than read a
// short value as corrupt only, or the high half of a long as an int
// (Curator reads it so), and write nothing. An Int and a SharedCount share
// one layout (a 4-byte big-endian int) and work together, writer child
// included.
func TestNumberRefusesOtherLayouts(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	obs := testkit.Connect(t, zkAddr, ns)

	count := shared.NewCount(c, "/count", 7)
	if err := count.Set(ctx, 7); err != nil {
		t.Fatal(err)
	}
	l := atomic.NewLong(c, "/count")
	defer func() { _ = l.Close(ctx) }()
	if _, err := l.Get(ctx); !errors.Is(err, atomic.ErrLayoutMismatch) || !errors.Is(err, atomic.ErrMalformed) {
		t.Fatalf("Long.Get on a SharedCount = %v; want ErrLayoutMismatch (and ErrMalformed)", err)
	}
	if _, err := l.Add(ctx, 1); !errors.Is(err, atomic.ErrLayoutMismatch) {
		t.Fatalf("Long.Add on a SharedCount = %v; want ErrLayoutMismatch", err)
	}

	long := atomic.NewLong(c, "/long")
	defer func() { _ = long.Close(ctx) }()
	if _, err := long.Add(ctx, 1<<40); err != nil {
		t.Fatal(err)
	}
	i := atomic.NewInt(c, "/long")
	defer func() { _ = i.Close(ctx) }()
	if _, err := i.Get(ctx); !errors.Is(err, atomic.ErrLayoutMismatch) {
		t.Fatalf("Int.Get on a Long = %v; want ErrLayoutMismatch", err)
	}
	if _, err := i.Add(ctx, 1); !errors.Is(err, atomic.ErrLayoutMismatch) {
		t.Fatalf("Int.Add on a Long = %v; want ErrLayoutMismatch", err)
	}
	if v, err := long.Get(ctx); err != nil || v != 1<<40 {
		t.Fatalf("the Long after the refusals = %d, %v", v, err)
	}
	if kids := testkit.Children(t, obs, "/count"); len(kids) != 0 {
		t.Fatalf("left under the SharedCount: %v", kids)
	}

	// One layout: they work together.
	same := atomic.NewInt(c, "/count")
	defer func() { _ = same.Close(ctx) }()
	if v, err := same.Add(ctx, 1); err != nil || v != 8 {
		t.Fatalf("Int.Add on a SharedCount = %d, %v; want 8", v, err)
	}
	if v, err := count.Get(ctx); err != nil || v != 8 {
		t.Fatalf("SharedCount after the Int's add = %d, %v", v, err)
	}
}
