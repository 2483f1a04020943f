package barrier_test

import (
	"errors"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/barrier"
)

// The lifecycle table (issue 33's class). Neither handle has a Close of
// its own: a nil handle answers every call with ErrNilHandle (Done is
// closed, Err says so), Leave twice is ErrNotEntered the second time, and
// after the client's Close every call fails with framework.ErrClosed and
// leaves nothing.
func TestLifecycleTable(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	var b *barrier.Barrier
	var d *barrier.Double
	for name, err := range map[string]error{
		"Barrier.Set": b.Set(ctx), "Barrier.Remove": b.Remove(ctx), "Barrier.Wait": b.Wait(ctx),
		"Double.Enter": d.Enter(ctx), "Double.Leave": d.Leave(ctx), "Double.Err": d.Err(),
	} {
		if !errors.Is(err, barrier.ErrNilHandle) {
			t.Errorf("nil %s = %v; want ErrNilHandle", name, err)
		}
	}
	testkit.WaitClosed(t, d.Done(), "a nil Double's Done")

	ns := testkit.Unique(t)
	obs := testkit.Connect(t, zkAddr, ns)
	c, err := framework.Connect(ctx, zkAddr, framework.WithNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	m := barrier.NewDouble(c, barrierPath, 1)
	if err := m.Enter(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Leave(ctx); !errors.Is(err, barrier.ErrNotEntered) {
		t.Fatalf("second Leave = %v; want ErrNotEntered", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	gate := barrier.New(c, "/gate")
	for name, err := range map[string]error{
		"Barrier.Set": gate.Set(ctx), "Barrier.Wait": gate.Wait(ctx), "Barrier.Remove": gate.Remove(ctx),
		"Double.Enter": m.Enter(ctx),
	} {
		if !errors.Is(err, framework.ErrClosed) {
			t.Errorf("%s after the client's Close = %v; want ErrClosed", name, err)
		}
	}
	// The containers on the way are the server's to reap.
	if kids := testkit.Children(t, obs, barrierPath); len(kids) != 0 {
		t.Fatalf("left behind: %v", kids)
	}
	if st, err := obs.Exists(ctx, "/gate"); err != nil || st != nil {
		t.Fatalf("the gate: %v, %v; want none", st, err)
	}
}
