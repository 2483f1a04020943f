package leader_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/leader"
	"github.com/gocurator/curator/zktest"
)

// campaign runs e.Campaign on a goroutine; its result arrives on the
// channel.
type result struct {
	term *leader.Term
	err  error
}

func campaign(ctx context.Context, e *leader.Election) <-chan result {
	ch := make(chan result, 1)
	go func() {
		t, err := e.Campaign(ctx)
		ch <- result{t, err}
	}()
	return ch
}

func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(testkit.Deadline):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// CURATOR-444: a leader partitioned for longer than its session timeout
// while a follower takes over must have stopped leading (Done closed)
// before the follower's term begins.
func TestCurator444PartitionedLeaderStopsFirst(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	proxy := zktest.NewProxy(t, zkAddr)
	cl := testkit.Connect(t, proxy.Addr(), ns, framework.WithSessionTimeout(time.Second))
	cf := testkit.Connect(t, zkAddr, ns)
	old, err := leader.New(cl, "/e", leader.WithID("old")).Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	next := campaign(ctx, leader.New(cf, "/e", leader.WithID("next")))
	testkit.Eventually(t, "follower queued", func() bool { return len(testkit.Children(t, cf, "/e")) == 2 })
	proxy.BlackHole()
	r := await(t, next, "the follower's term")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !isClosed(old.Done()) {
		t.Fatal("the follower leads while the partitioned leader's Done is open")
	}
	if !errors.Is(old.Err(), leader.ErrLeadershipLost) {
		t.Fatalf("old leader's Err = %v", old.Err())
	}
	proxy.Restore()
	if err := r.term.Resign(ctx); err != nil {
		t.Fatal(err)
	}
}

// CURATOR-620: two Reconnected events in quick succession must not make a
// latch give up or duplicate its node (under the session policy a blip
// costs nothing).
func TestCurator620TwoQuickReconnects(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	proxy := zktest.NewProxy(t, zkAddr)
	session := framework.WithErrorPolicy(connstate.SessionPolicy{})
	cl := testkit.Connect(t, proxy.Addr(), ns, session)
	cw := testkit.Connect(t, proxy.Addr(), ns, session)
	term, err := leader.New(cl, "/e", leader.WithID("l")).Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waiter := campaign(ctx, leader.New(cw, "/e", leader.WithID("w")))
	testkit.Eventually(t, "waiter queued", func() bool { return len(testkit.Children(t, cl, "/e")) == 2 })
	before := testkit.Children(t, cl, "/e")
	for range 2 {
		changed := cl.StateChanged()
		proxy.Cut()
		testkit.WaitClosed(t, changed, "a state change after the cut")
		proxy.Restore()
		testkit.WaitState(t, cl, connstate.Reconnected)
		testkit.WaitState(t, cw, connstate.Reconnected)
	}
	if err := term.Err(); err != nil {
		t.Fatalf("term ended by two reconnects: %v", err)
	}
	after := testkit.Children(t, cl, "/e")
	if len(after) != 2 || !sameSet(before, after) {
		t.Fatalf("nodes before %v, after %v", before, after)
	}
	if err := term.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	r := await(t, waiter, "the waiter's term")
	if r.err != nil {
		t.Fatal(r.err)
	}
	_ = r.term.Resign(ctx)
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]bool{}
	for _, x := range a {
		m[x] = true
	}
	for _, x := range b {
		if !m[x] {
			return false
		}
	}
	return true
}

// CURATOR-696: the session expired while the server was down, and on
// reconnection the old session's node is still listed first (the server
// restored the session and has not expired it yet). Nobody may lead on
// the strength of that node: a new term begins only once the old nodes
// are gone, and its node is in its client's live session.
func TestCurator696ExpiredWhileServerDown(t *testing.T) {
	t.Parallel()
	srv := zktest.StartServer(t) // its own server: the test stops and restarts it
	ns := testkit.Unique(t)
	ctx, cancel := context.WithCancel(testkit.Ctx(t))
	defer cancel()
	short := framework.WithSessionTimeout(time.Second)
	ca := testkit.Connect(t, srv.ConnectString(), ns, short)
	cb := testkit.Connect(t, srv.ConnectString(), ns, short)
	ea := leader.New(ca, "/e", leader.WithID("a"))
	eb := leader.New(cb, "/e", leader.WithID("b"))
	first, err := ea.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waiting := campaign(ctx, eb)
	testkit.Eventually(t, "b queued", func() bool { return len(testkit.Children(t, ca, "/e")) == 2 })
	oldNodes := testkit.Children(t, ca, "/e")

	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitClosed(t, first.Done(), "a's term to end")
	testkit.WaitState(t, ca, connstate.Lost)
	r := await(t, waiting, "b's campaign to fail")
	if r.err == nil || r.term != nil {
		t.Fatalf("b's campaign across its session's end = %v, %v; want an error", r.term, r.err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	// Both campaign again in their new sessions.
	var leaders atomic.Int32
	check := func(e *leader.Election, c *framework.Client) <-chan error {
		ch := make(chan error, 1)
		go func() {
			term, err := e.Campaign(ctx)
			if err != nil {
				ch <- err
				return
			}
			defer term.Resign(context.Background())
			if leaders.Add(1) != 1 {
				ch <- errors.New("two leaders")
				return
			}
			defer leaders.Add(-1)
			for _, n := range oldNodes {
				if st, err := c.Exists(ctx, "/e/"+n); err != nil || st != nil {
					ch <- errors.New("leads while the old session's node " + n + " exists")
					return
				}
			}
			st, err := c.Exists(ctx, term.Node())
			if err != nil || st == nil || st.EphemeralOwner != c.SessionID() {
				ch <- errors.New("term's node not in the live session")
				return
			}
			ch <- nil
		}()
		return ch
	}
	ra, rb := check(ea, ca), check(eb, cb)
	for _, ch := range []<-chan error{ra, rb} {
		if err := await(t, ch, "a term after the restart"); err != nil {
			t.Fatal(err)
		}
	}
}

// CURATOR-724: the election's path deleted (recursively) while connected:
// the candidates must make new nodes and elect a leader again, not sit
// without one.
func TestCurator724PathDeleted(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	c1 := testkit.Connect(t, zkAddr, ns)
	c2 := testkit.Connect(t, zkAddr, ns)
	lost := make(chan error, 1)
	notLeader := func(err error) {
		select {
		case lost <- err:
		default: // the first one is enough
		}
	}
	l1 := leader.New(c1, "/e", leader.WithID("1")).Start(leader.Listener{NotLeader: notLeader})
	defer l1.Close(ctx)
	if _, err := l1.Await(ctx); err != nil {
		t.Fatal(err)
	}
	l2 := leader.New(c2, "/e", leader.WithID("2")).Start(leader.Listener{NotLeader: notLeader})
	defer l2.Close(ctx)
	testkit.Eventually(t, "both candidates", func() bool { return len(testkit.Children(t, c1, "/e")) == 2 })
	defer func() { // before the Closes: what a failure found
		if t.Failed() {
			children, _, err := c1.Children(ctx, "/e")
			t.Logf("latch 1: leads %v, stopped %v (%v); latch 2: leads %v, stopped %v (%v); children %v (%v)",
				l1.HasLeadership(), isClosed(l1.Done()), l1.Err(), l2.HasLeadership(), isClosed(l2.Done()), l2.Err(), children, err)
		}
	}()
	// The candidates make new nodes as the old ones go, so the recursive
	// delete may find children it did not list: delete until it wins.
	testkit.Eventually(t, "the path deleted", func() bool {
		return c1.Delete(ctx, "/e", framework.DeletingChildren()) == nil
	})
	if err := await(t, lost, "the leader's notLeader"); !errors.Is(err, leader.ErrNodeDeleted) {
		t.Fatalf("notLeader(%v), want ErrNodeDeleted", err)
	}
	testkit.Eventually(t, "a leader again, both candidates back", func() bool {
		return (l1.HasLeadership() || l2.HasLeadership()) && len(testkit.Children(t, c1, "/e")) == 2
	})
	if l1.HasLeadership() && l2.HasLeadership() {
		t.Fatal("two leaders")
	}
}

// CURATOR-644/645: Reconnected must re-check, not reset: two latches whose
// connections flap keep their nodes and their leader (no reset storm).
func TestCurator644NoResetStorm(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	session := framework.WithErrorPolicy(connstate.SessionPolicy{})
	var p [2]*zktest.Proxy
	var c [2]*framework.Client
	var isLeader atomic.Int32
	var latches [2]*leader.Latch
	for i := range 2 {
		p[i] = zktest.NewProxy(t, zkAddr)
		c[i] = testkit.Connect(t, p[i].Addr(), ns, session)
		latches[i] = leader.New(c[i], "/e").Start(leader.Listener{IsLeader: func(*leader.Term) { isLeader.Add(1) }})
		defer latches[i].Close(ctx)
	}
	testkit.Eventually(t, "both candidates", func() bool { return len(testkit.Children(t, c[0], "/e")) == 2 })
	// The first leader's isLeader is called on the latch's own goroutine:
	// wait for it, so that the count below is about the flaps only.
	testkit.Eventually(t, "a leader", func() bool { return isLeader.Load() >= 1 })
	before := testkit.Children(t, c[0], "/e")
	for range 3 {
		for i := range 2 {
			changed := c[i].StateChanged()
			p[i].Cut()
			testkit.WaitClosed(t, changed, "a state change after the cut")
			p[i].Restore()
			testkit.WaitState(t, c[i], connstate.Reconnected)
		}
	}
	if after := testkit.Children(t, c[0], "/e"); !sameSet(before, after) {
		t.Fatalf("nodes before %v, after %v: reset on reconnection", before, after)
	}
	if n := isLeader.Load(); n != 1 {
		t.Fatalf("isLeader called %d times, want 1", n)
	}
	if latches[0].HasLeadership() == latches[1].HasLeadership() {
		t.Fatal("not exactly one leader")
	}
}

// etcd#19597: a waiting candidate whose session expires while it is
// partitioned gets an error (within the session timeout, as the client
// declares the session lost), never a term later.
func TestEtcd19597WaitingCandidateSessionExpires(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	proxy := zktest.NewProxy(t, zkAddr)
	ch := testkit.Connect(t, zkAddr, ns)
	cw := testkit.Connect(t, proxy.Addr(), ns, framework.WithSessionTimeout(time.Second))
	holder, err := leader.New(ch, "/e").Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waiting := campaign(ctx, leader.New(cw, "/e"))
	testkit.Eventually(t, "waiter queued", func() bool { return len(testkit.Children(t, ch, "/e")) == 2 })
	proxy.BlackHole()
	r := await(t, waiting, "the partitioned waiter's campaign to fail")
	if r.term != nil || !errors.Is(r.err, leader.ErrSessionLost) {
		t.Fatalf("campaign = %v, %v; want ErrSessionLost", r.term, r.err)
	}
	if err := holder.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	proxy.Restore()
	testkit.Eventually(t, "no node left", func() bool { return len(testkit.Children(t, ch, "/e")) == 0 })
}

// A campaign cancelled while the connection is down leaves no node once
// the connection is back.
func TestCampaignCancelledWhileDisconnectedLeavesNothing(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	proxy := zktest.NewProxy(t, zkAddr)
	ch := testkit.Connect(t, zkAddr, ns)
	cw := testkit.Connect(t, proxy.Addr(), ns)
	holder, err := leader.New(ch, "/e").Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	waiting := campaign(cctx, leader.New(cw, "/e"))
	testkit.Eventually(t, "waiter queued", func() bool { return len(testkit.Children(t, ch, "/e")) == 2 })
	proxy.Cut()
	testkit.WaitState(t, cw, connstate.Suspended)
	cancel()
	if r := await(t, waiting, "the cancelled campaign"); r.term != nil || !errors.Is(r.err, context.Canceled) {
		t.Fatalf("campaign = %v, %v; want Canceled", r.term, r.err)
	}
	proxy.Restore()
	testkit.Eventually(t, "the waiter's node deleted", func() bool { return len(testkit.Children(t, ch, "/e")) == 1 })
	if err := holder.Resign(ctx); err != nil {
		t.Fatal(err)
	}
}

// The leader-lost signal: under the standard policy Done closes on
// Suspended; under the session policy (the client's, or the election's
// WithErrorPolicy) it stays open through Suspended and Reconnected and
// closes on Lost.
func TestLossSignalPolicies(t *testing.T) {
	t.Parallel()
	t.Run("standard", func(t *testing.T) {
		ns := testkit.Unique(t)
		ctx := testkit.Ctx(t)
		proxy := zktest.NewProxy(t, zkAddr)
		c := testkit.Connect(t, proxy.Addr(), ns)
		term, err := leader.New(c, "/e").Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		proxy.Cut()
		testkit.WaitClosed(t, term.Done(), "Done on Suspended")
		if !errors.Is(term.Err(), leader.ErrSuspended) {
			t.Fatalf("Err = %v, want ErrSuspended", term.Err())
		}
		if err := term.Context().Err(); !errors.Is(err, context.Canceled) {
			t.Fatalf("term context Err = %v", err)
		}
		proxy.Restore()
		testkit.Eventually(t, "node deleted", func() bool { return len(testkit.Children(t, c, "/e")) == 0 })
	})
	for _, tc := range []struct {
		name   string
		client []framework.Option
		opts   []leader.Option
	}{
		{"session (client)", []framework.Option{framework.WithErrorPolicy(connstate.SessionPolicy{})}, nil},
		{"session (election)", nil, []leader.Option{leader.WithErrorPolicy(connstate.SessionPolicy{})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := testkit.Unique(t)
			ctx := testkit.Ctx(t)
			proxy := zktest.NewProxy(t, zkAddr)
			c := testkit.Connect(t, proxy.Addr(), ns, append(tc.client, framework.WithSessionTimeout(3*time.Second))...)
			term, err := leader.New(c, "/e", tc.opts...).Campaign(ctx)
			if err != nil {
				t.Fatal(err)
			}
			proxy.Cut()
			testkit.WaitState(t, c, connstate.Suspended)
			proxy.Restore()
			testkit.WaitState(t, c, connstate.Reconnected)
			if isClosed(term.Done()) {
				t.Fatalf("Done closed by a blip: %v", term.Err())
			}
			proxy.BlackHole()
			testkit.WaitClosed(t, term.Done(), "Done on Lost")
			if !errors.Is(term.Err(), leader.ErrSessionLost) {
				t.Fatalf("Err = %v, want ErrSessionLost", term.Err())
			}
			proxy.Restore()
			testkit.Eventually(t, "node gone", func() bool { return len(testkit.Children(t, c, "/e")) == 0 })
		})
	}
}
