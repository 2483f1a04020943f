package discovery_test

import (
	"fmt"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/discovery"
)

// A ServiceCache's event costs the instance it names, not the service: the
// sorted list is made when somebody asks for it (Instances, a listener),
// not once per event. Made per event, loading n instances cost n² (about
// 200 s of CPU for 10,000, found by curatorbench -registry-scale). Here
// 400 instances load and 100 reads follow: one list is made, not 400; then
// a listener hears of one more instance.
func TestServiceCacheMakesListsOnDemand(t *testing.T) {
	const n = 400
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	d := discovery.New(c, "/services")
	t.Cleanup(func() { _ = d.Close(ctx) })
	dir := "/services/svc"
	if _, err := c.Create(ctx, dir, nil, framework.CreatingParents()); err != nil {
		t.Fatal(err)
	}
	for k := 0; k < n; k += 100 {
		var ops []framework.Op
		for i := k; i < k+100; i++ {
			data, err := discovery.Instance{Name: "svc", ID: fmt.Sprintf("i%04d", i), Address: "10.0.0.1"}.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			ops = append(ops, framework.CreateOp(framework.JoinPath(dir, fmt.Sprintf("i%04d", i)), data, framework.Persistent))
		}
		if _, err := c.Multi(ctx, ops...); err != nil {
			t.Fatal(err)
		}
	}
	s := d.Cache("svc")
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if got := len(s.Instances()); got != n {
			t.Fatalf("Instances() = %d after Start, want %d", got, n)
		}
	}
	if b := discovery.SnapshotsMade(s); b > 2 {
		t.Fatalf("%d lists made for %d events and 100 reads: made per event, not on demand", b, n)
	}
	// A listener takes the latest list when it is ready for one: a list
	// per change it runs for, at most.
	seen := make(chan int, 1000)
	s.Listen(func(list []discovery.Instance) { seen <- len(list) })
	data, _ := discovery.Instance{Name: "svc", ID: "late", Address: "10.0.0.2"}.MarshalJSON()
	if _, err := c.Create(ctx, framework.JoinPath(dir, "late"), data); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(testkit.Deadline)
	for last := 0; last != n+1; {
		select {
		case last = <-seen:
		case <-deadline:
			t.Fatalf("the listener never saw %d instances (last %d)", n+1, last)
		}
	}
	list := s.Instances()
	if len(list) != n+1 {
		t.Fatalf("Instances() = %d, want %d", len(list), n+1)
	}
	for k := 1; k < len(list); k++ {
		if list[k-1].ID >= list[k].ID {
			t.Fatalf("Instances() out of node-name order at %d: %q, %q", k, list[k-1].ID, list[k].ID)
		}
	}
	if b := discovery.SnapshotsMade(s); b > 3 {
		t.Fatalf("%d lists made in all, want at most 3", b)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, dir, framework.DeletingChildren()); err != nil {
		t.Fatal(err)
	}
}

// A service whose listing passes the client's jute.maxbuffer is reported
// once (a Java client with that limit cannot list it), and again only
// after it fell below and passed it anew.
func TestServiceCacheWarnsOfListingPastMaxBuffer(t *testing.T) {
	const limit = 2000 // 4 + 40 bytes per UUID-sized id: past it at 50
	ctx := testkit.Ctx(t)
	core, logs := observer.New(zap.WarnLevel)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t), framework.WithJuteMaxBuffer(limit))
	d := discovery.New(c, "/services", discovery.WithLogger(zap.New(core)))
	t.Cleanup(func() { _ = d.Close(ctx) })
	s := d.Cache("svc")
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	id := func(i int) string { return fmt.Sprintf("%036d", i) }
	register := func(from, to int) {
		for i := from; i < to; i++ {
			if err := d.Register(ctx, discovery.Instance{Name: "svc", ID: id(i), Address: "10.0.0.1"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	warnings := func(want int) {
		t.Helper()
		deadline := time.Now().Add(testkit.Deadline)
		for {
			got := logs.FilterMessageSnippet("past jute.maxbuffer").Len()
			if got == want {
				return
			}
			if got > want || time.Now().After(deadline) {
				t.Fatalf("%d warnings of the listing, want %d", got, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor := func(n int) {
		t.Helper()
		deadline := time.Now().Add(testkit.Deadline)
		for len(s.Instances()) != n {
			if time.Now().After(deadline) {
				t.Fatalf("the cache holds %d instances, want %d", len(s.Instances()), n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	register(0, 49) // 4 + 49 x 40 = 1964 bytes: within
	waitFor(49)
	warnings(0)
	register(49, 55) // past it from the 50th
	waitFor(55)
	warnings(1)
	for i := 0; i < 10; i++ {
		if err := d.Unregister(ctx, discovery.Instance{Name: "svc", ID: id(i)}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(45)
	register(0, 10)
	waitFor(55)
	warnings(2)
}
