package barrier_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/barrier"
)

// Curator's DistributedDoubleBarrier members (run by the Java driver) and
// ours in one barrier of four: two Go members wait, two Java members
// arrive, all four pass and all four leave, and nothing is left. The Go
// members enter first because a waiting Curator member passes on the first
// change it is told of (its enter is a do-while(false) around one wait(),
// GH-1290): only the last arrivals may be Java's. Java uses full paths: no
// namespace, a path unique to the test instead.
func TestInteropDoubleBarrierWithCurator(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	path := "/interop/" + testkit.Unique(t) + "/barrier"
	java := curatorjava.StartDriver(t, zkAddr)
	obs := testkit.Connect(t, zkAddr, "")
	var goMembers []*barrier.Double
	var entered []<-chan error
	for i := 0; i < 2; i++ {
		d := barrier.NewDouble(testkit.Connect(t, zkAddr, ""), path, 4)
		goMembers = append(goMembers, d)
		entered = append(entered, async(func() error { return d.Enter(ctx) }))
	}
	testkit.Eventually(t, "two Go members waiting", func() bool { return len(testkit.Children(t, obs, path)) == 2 })
	for _, id := range []string{"j1", "j2"} {
		java.MustDo(fmt.Sprintf("dbarrier %s %s 4", id, path))
	}
	java.MustDo("enter j1 20000")
	testkit.Eventually(t, "three members", func() bool { return len(testkit.Children(t, obs, path)) == 3 })
	for i, ch := range entered {
		select {
		case err := <-ch:
			t.Fatalf("Go member %d passed with 3 of 4: %v", i, err)
		default:
		}
	}
	java.MustDo("enter j2 20000")
	awaitEvents(t, java, "entered j1 true", "entered j2 true")
	for i, ch := range entered {
		if err := await(t, ch, "Enter"); err != nil {
			t.Fatalf("Go member %d: %v", i, err)
		}
	}

	java.MustDo("leave j1 20000")
	java.MustDo("leave j2 20000")
	var left []<-chan error
	for _, d := range goMembers {
		left = append(left, async(func() error { return d.Leave(ctx) }))
	}
	for i, ch := range left {
		if err := await(t, ch, "Leave"); err != nil {
			t.Fatalf("Go member %d: Leave: %v", i, err)
		}
	}
	awaitEvents(t, java, "left j1 true", "left j2 true")
	testkit.Eventually(t, "an empty barrier", func() bool { return len(testkit.Children(t, obs, path)) == 0 })
}

// awaitEvents waits for every one of want from the driver, in any order;
// other events are dropped.
func awaitEvents(t *testing.T, java *curatorjava.Driver, want ...string) {
	t.Helper()
	missing := map[string]bool{}
	for _, w := range want {
		missing[w] = true
	}
	timer := time.NewTimer(testkit.Deadline)
	defer timer.Stop()
	for len(missing) > 0 {
		select {
		case ev, ok := <-java.Events():
			if !ok {
				t.Fatalf("driver exited; still waiting for %v", missing)
			}
			delete(missing, ev)
		case <-timer.C:
			t.Fatalf("no events %v", missing)
		}
	}
}

// Curator's DistributedBarrier and ours on one path, both ways.
func TestInteropBarrierWithCurator(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	path := "/interop/" + testkit.Unique(t) + "/gate"
	java := curatorjava.StartDriver(t, zkAddr)
	c := testkit.Connect(t, zkAddr, "")
	b := barrier.New(c, path)

	java.MustDo("barrier jb " + path)
	java.MustDo("bset jb")
	waited := async(func() error { return b.Wait(ctx) })
	testkit.AwaitWatch(t, zkAddr, c, path)
	java.MustDo("bremove jb")
	if err := await(t, waited, "Wait"); err != nil {
		t.Fatal(err)
	}

	if err := b.Set(ctx); err != nil {
		t.Fatal(err)
	}
	java.MustDo("bwait jb 20000")
	if got := java.MustDo("ping"); got != "pong" {
		t.Fatal(got)
	}
	if err := b.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	if err := java.WaitEvent("bwaited jb true", testkit.Deadline); err != nil {
		t.Fatal(err)
	}
}
