package leader_test

import (
	"context"
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/leader"
	"github.com/gocurator/curator/zktest"
)

// An observer costs one server watch on the election's directory, gone
// from the server once the observer's ctx ends.
func TestObserveLeavesNoServerWatch(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx, cancel := context.WithCancel(testkit.Ctx(t))
	defer cancel()
	c := testkit.Connect(t, zkAddr, ns)
	e := leader.New(c, "/e", leader.WithID("one"))
	term, err := e.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer term.Resign(context.Background())
	oc := testkit.Connect(t, zkAddr, ns)
	events := leader.New(oc, "/e").Observe(ctx)
	if ev := await(t, events, "first event"); ev.Leader.ID != "one" {
		t.Fatalf("first event %+v, want one", ev)
	}
	testkit.Eventually(t, "the observer's watch", func() bool { return testkit.WatchCount(t, zkAddr, oc) > 0 })
	t.Logf("server watches of an observer: %v", testkit.SessionWatches(t, zkAddr, oc.SessionID()))
	cancel()
	for range events {
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, oc)
}

// Observe across a session expiry: the leader changed while the observer
// was cut off and its session expired; once back (a new session, the
// watch's WatchResync) it reports the new leader, then the next change,
// in order and with no repeat of the old one.
func TestObserveInOrderAcrossSessionExpiry(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx, cancel := context.WithCancel(testkit.Ctx(t))
	defer cancel()
	c1 := testkit.Connect(t, zkAddr, ns)
	c2 := testkit.Connect(t, zkAddr, ns)
	proxy := zktest.NewProxy(t, zkAddr)
	oc := testkit.Connect(t, proxy.Addr(), ns, framework.WithSessionTimeout(time.Second))
	t1, err := leader.New(c1, "/e", leader.WithID("one")).Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	events := leader.New(oc, "/e").Observe(ctx)
	if ev := await(t, events, "first event"); ev.Leader.ID != "one" {
		t.Fatalf("first event %+v, want one", ev)
	}
	next := campaign(ctx, leader.New(c2, "/e", leader.WithID("two")))
	testkit.Eventually(t, "two queued", func() bool { return len(testkit.Children(t, c1, "/e")) == 2 })
	// alive goes when the server expires the observer's session.
	if _, err := oc.Create(ctx, "/alive", nil, framework.WithMode(framework.Ephemeral)); err != nil {
		t.Fatal(err)
	}
	proxy.Cut()
	if err := t1.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	r := await(t, next, "two's term")
	if r.err != nil {
		t.Fatal(r.err)
	}
	testkit.WaitState(t, oc, connstate.Lost)
	testkit.Eventually(t, "the observer's session expired on the server", func() bool {
		st, err := c1.Exists(ctx, "/alive")
		return err == nil && st == nil
	})
	proxy.Restore()
	if ev := await(t, events, "the leader after the expiry"); ev.Leader.ID != "two" || ev.Token != r.term.Token() {
		t.Fatalf("event %+v after the expiry, want two with token %d", ev, r.term.Token())
	}
	if err := r.term.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if ev := await(t, events, "no leader"); !ev.NoLeader() {
		t.Fatalf("event %+v, want no leader", ev)
	}
	cancel()
	for range events {
	}
}
