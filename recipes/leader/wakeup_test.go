package leader_test

import (
	"context"
	"testing"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/leader"
	"github.com/gocurator/curator/zktest"
)

// Issue 33's wake-up class (pitfall 26): a wake-up is not the condition.
// A candidate waits behind the leader and a middle candidate; its watch
// fires on the leader's data change, its predecessor (the middle one)
// leaves, and its connection is cut and restored, each while the leader
// still leads. None of these may make it lead: its fn records, on the
// server, whether the leader's node still existed when it began (the
// evidence outlives the window), and after each wake-up the test waits
// until the candidate has looked again (its watch set anew on the server)
// and finds fn not called. Only the leader's resignation lets it lead.
func TestWakeUpIsNotLeadership(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		policy connstate.ErrorPolicy
	}{
		{"standard", connstate.StandardPolicy{}},
		{"session", connstate.SessionPolicy{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := testkit.Unique(t)
			ctx, cancel := context.WithCancel(testkit.Ctx(t))
			defer cancel()
			direct := testkit.Connect(t, zkAddr, ns)
			mc := testkit.Connect(t, zkAddr, ns)
			proxy := zktest.NewProxy(t, zkAddr)
			wc := testkit.Connect(t, proxy.Addr(), ns, framework.WithErrorPolicy(tc.policy))

			first, err := leader.New(direct, "/e", leader.WithID("leader")).Campaign(ctx)
			if err != nil {
				t.Fatal(err)
			}
			mctx, leave := context.WithCancel(ctx)
			defer leave()
			middle := campaign(mctx, leader.New(mc, "/e", leader.WithID("middle")))
			testkit.Eventually(t, "middle queued", func() bool { return len(testkit.Children(t, direct, "/e")) == 2 })
			middleNode := "/e/" + testkit.Children(t, direct, "/e")[1]
			if middleNode == first.Node() {
				middleNode = "/e/" + testkit.Children(t, direct, "/e")[0]
			}

			// fn's evidence: did the leader's node exist when it began?
			led := make(chan bool, 8)
			ran := make(chan error, 1)
			go func() {
				ran <- leader.New(wc, "/e", leader.WithID("waiter")).Run(ctx, func(fctx context.Context) error {
					st, err := direct.Exists(ctx, first.Node())
					led <- err != nil || st != nil
					<-fctx.Done()
					return nil
				})
			}()
			testkit.AwaitWatch(t, zkAddr, wc, middleNode)
			notLed := func(after string) {
				t.Helper()
				select {
				case <-led:
					t.Fatalf("the waiter led after %s, while the leader's node %s existed", after, first.Node())
				default:
				}
			}

			// 1. A watch event that is no deletion: the middle node's data
			// changes (the waiter's getData watch fires), and the waiter
			// sets its watch again after looking.
			if _, err := mc.Set(ctx, middleNode, []byte("changed"), -1); err != nil {
				t.Fatal(err)
			}
			testkit.AwaitWatch(t, zkAddr, wc, middleNode)
			notLed("a data change of its predecessor")

			// 2. Its predecessor leaves: the leader is still ahead.
			leave()
			if r := await(t, middle, "the middle candidate's end"); r.err == nil {
				t.Fatal("the middle candidate led")
			}
			testkit.AwaitWatch(t, zkAddr, wc, first.Node())
			notLed("its predecessor left")

			// 3. A cut and a reconnection: under the standard policy
			// the candidacy may start over (Run campaigns again), under
			// the session policy the node stays; either way the waiter
			// watches the leader again and does not lead.
			changed := wc.StateChanged()
			proxy.Cut()
			testkit.WaitClosed(t, changed, "a state change after the cut")
			proxy.Restore()
			testkit.WaitState(t, wc, connstate.Reconnected)
			if err := wc.Sync(ctx, "/"); err != nil {
				t.Fatal(err)
			}
			testkit.AwaitWatch(t, zkAddr, wc, first.Node())
			notLed("a cut and a reconnection")
			if err := first.Err(); err != nil {
				t.Fatalf("the leader's term ended: %v", err)
			}

			// Only the resignation lets the waiter lead.
			if err := first.Resign(ctx); err != nil {
				t.Fatal(err)
			}
			if existed := await(t, led, "the waiter's term"); existed {
				t.Fatalf("the waiter led while the leader's node %s existed", first.Node())
			}
			cancel()
			if err := await(t, ran, "Run's return"); err == nil {
				t.Fatal("Run returned nil after its ctx ended")
			}
			testkit.Eventually(t, "no node left", func() bool { return len(testkit.Children(t, direct, "/e")) == 0 })
		})
	}
}

// Observe re-reads on every wake-up and reports what it reads, never the
// wake-up itself: a data change of the leader's node, a candidate joining
// and leaving behind the leader, and a cut and reconnection of the
// observer (a resync) all leave the leader as it was, so the next event
// after the first is the real change, the next leader, and nothing in
// between.
func TestObserveWakeUpsAreNotChanges(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx, cancel := context.WithCancel(testkit.Ctx(t))
	defer cancel()
	c1 := testkit.Connect(t, zkAddr, ns)
	c2 := testkit.Connect(t, zkAddr, ns)
	proxy := zktest.NewProxy(t, zkAddr)
	oc := testkit.Connect(t, proxy.Addr(), ns, framework.WithErrorPolicy(connstate.SessionPolicy{}))
	t1, err := leader.New(c1, "/e", leader.WithID("one")).Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	events := leader.New(oc, "/e").Observe(ctx)
	if ev := await(t, events, "the first event"); ev.Leader.ID != "one" || ev.Node != t1.Node() {
		t.Fatalf("first event %+v, want one", ev)
	}
	if _, err := c1.Set(ctx, t1.Node(), []byte("one"), -1); err != nil {
		t.Fatal(err)
	}
	jctx, leave := context.WithCancel(ctx)
	joined := campaign(jctx, leader.New(c2, "/e", leader.WithID("passing")))
	testkit.Eventually(t, "a candidate joined", func() bool { return len(testkit.Children(t, c1, "/e")) == 2 })
	leave()
	if r := await(t, joined, "the passing candidate's end"); r.err == nil {
		t.Fatal("the passing candidate led")
	}
	changed := oc.StateChanged()
	proxy.Cut()
	testkit.WaitClosed(t, changed, "a state change after the cut")
	proxy.Restore()
	testkit.WaitState(t, oc, connstate.Reconnected)

	t2c := campaign(ctx, leader.New(c2, "/e", leader.WithID("two")))
	testkit.Eventually(t, "two queued", func() bool { return len(testkit.Children(t, c1, "/e")) == 2 })
	if err := t1.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	r := await(t, t2c, "two's term")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if ev := await(t, events, "the next event"); ev.Leader.ID != "two" || ev.Node != r.term.Node() {
		t.Fatalf("the event after the wake-ups is %+v, want two's term (%s)", ev, r.term.Node())
	}
	if err := r.term.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if ev := await(t, events, "no leader"); !ev.NoLeader() {
		t.Fatalf("event %+v, want no leader", ev)
	}
}
