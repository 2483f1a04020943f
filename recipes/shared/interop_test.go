package shared_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/shared"
)

// Curator's SharedCount and ours read and write one value, both ways,
// negative numbers and the int32 extremes included. Java uses full paths:
// no namespace here, a path unique to the test instead.
func TestInteropWithCuratorSharedCount(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	base := "/interop/" + testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, "")
	java := curatorjava.StartDriver(t, zkAddr)
	event := func(id string, v int) {
		t.Helper()
		if err := java.WaitEvent(fmt.Sprintf("count %s %d", id, v), testkit.Deadline); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(cmd, want string) {
		t.Helper()
		if got := java.MustDo(cmd); got != want {
			t.Fatalf("%s: got %q, want %q", cmd, got, want)
		}
	}

	// Java makes the node: we read its seed and ignore ours.
	p := base + "/java-first"
	expect(fmt.Sprintf("count j %s 3", p), "")
	n := shared.NewCount(c, p, 99)
	defer n.Close()
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if got := n.Value(); got != 3 {
		t.Fatalf("Go read Curator's seed as %d, want 3", got)
	}
	stale := n.Versioned()

	// Our write reaches Curator's cache.
	if err := n.Set(ctx, -12345); err != nil {
		t.Fatal(err)
	}
	event("j", -12345)
	expect("get j", "-12345")

	// Curator's writes reach ours.
	expect("set j 42", "")
	waitValue(t, n, 42)
	expect("trySet j 43", "true")
	waitValue(t, n, 43)
	if ok, err := n.TrySet(ctx, stale, 1000); ok || err != nil {
		t.Fatalf("TrySet with a version older than Curator's writes = %v, %v; want false", ok, err)
	}
	cur, err := n.GetVersioned(ctx)
	if err != nil || cur.Value != 43 {
		t.Fatalf("GetVersioned = %+v, %v", cur, err)
	}
	if ok, err := n.TrySet(ctx, cur, math.MaxInt32); !ok || err != nil {
		t.Fatalf("TrySet at Curator's version = %v, %v", ok, err)
	}
	event("j", math.MaxInt32)
	// Curator's trySet compares against its cached version, which is ours
	// now.
	expect("trySet j 44", "true")
	waitValue(t, n, 44)

	// We make the node: Curator reads our seed.
	q := base + "/go-first"
	m := shared.NewCount(c, q, -7)
	defer m.Close()
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	expect(fmt.Sprintf("count j2 %s 5", q), "")
	expect("get j2", "-7")
	expect(fmt.Sprintf("set j2 %d", math.MinInt32), "")
	waitValue(t, m, math.MinInt32)
	if got, err := m.Get(ctx); err != nil || got != math.MinInt32 {
		t.Fatalf("Get = %d, %v", got, err)
	}
}
