package barrier_test

import (
	"errors"
	"testing"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/barrier"
)

// A Barrier on a path that holds a double barrier's layout (member nodes
// named by UUID, the ready node) refuses with ErrLayoutMismatch rather than
// taking it for a closed barrier (Set: "already closed", Wait: waits for
// ever) or failing with a bare "not empty" (Remove). The double barrier is
// left as it was. (The other direction cannot be seen: a plain barrier is a
// node with no children, as an empty double barrier's path is; see
// docs/barrier.md.)
func TestBarrierRefusesDoubleLayout(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	obs := testkit.Connect(t, zkAddr, ns)
	d := barrier.NewDouble(testkit.Connect(t, zkAddr, ns), barrierPath, 1)
	if err := d.Enter(ctx); err != nil { // its node and the ready node
		t.Fatal(err)
	}
	want := testkit.Children(t, obs, barrierPath)
	b := barrier.New(c, barrierPath)
	for name, call := range map[string]func() error{
		"Set":    func() error { return b.Set(ctx) },
		"Wait":   func() error { return b.Wait(ctx) },
		"Remove": func() error { return b.Remove(ctx) },
	} {
		if err := call(); !errors.Is(err, barrier.ErrLayoutMismatch) {
			t.Errorf("%s on a double barrier = %v; want ErrLayoutMismatch", name, err)
		}
	}
	if got := testkit.Children(t, obs, barrierPath); len(got) != len(want) {
		t.Fatalf("the double barrier changed: %v, was %v", got, want)
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, c)
	if err := d.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	if got := testkit.Children(t, obs, barrierPath); len(got) != 0 {
		t.Fatalf("left behind: %v", got)
	}
}
