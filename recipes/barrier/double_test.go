package barrier_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/barrier"
	"github.com/gocurator/curator/zktest"
)

const barrierPath = "/barriers/job"

// async runs f on a goroutine and returns its error on a channel.
func async(f func() error) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	return ch
}

// await returns what ch delivers, failing the test after the deadline.
func await(t *testing.T, ch <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(testkit.Deadline):
		t.Fatalf("%s did not return", what)
		return nil
	}
}

// members lists the barrier's member nodes (ready left out).
func members(t *testing.T, c *framework.Client) []string {
	t.Helper()
	kids := testkit.Children(t, c, barrierPath)
	return slices.DeleteFunc(kids, func(k string) bool { return k == "ready" })
}

// doubles returns n members of one barrier for n, each on a client (a
// session) of its own.
func doubles(t *testing.T, ns string, count, n int) []*barrier.Double {
	ds, _ := doublesAndClients(t, ns, count, n)
	return ds
}

// doublesAndClients is doubles with the members' clients.
func doublesAndClients(t *testing.T, ns string, count, n int) ([]*barrier.Double, []*framework.Client) {
	ds := make([]*barrier.Double, count)
	cs := make([]*framework.Client, count)
	for i := range ds {
		cs[i] = testkit.Connect(t, zkAddr, ns)
		ds[i] = barrier.NewDouble(cs[i], barrierPath, n)
	}
	return ds, cs
}

// A full round: nobody passes Enter before the last member arrives, all
// pass once it does, all Leave, and nothing is left: no member node, no
// ready node, no watch.
func TestDoubleRound(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	obs := testkit.Connect(t, zkAddr, ns)
	ds, cs := doublesAndClients(t, ns, 3, 3)
	first := []<-chan error{async(func() error { return ds[0].Enter(ctx) }), async(func() error { return ds[1].Enter(ctx) })}
	testkit.Eventually(t, "two members waiting", func() bool { return len(members(t, obs)) == 2 })
	for i, ch := range first {
		select {
		case err := <-ch:
			t.Fatalf("member %d entered with 2 of 3: %v", i, err)
		default:
		}
	}
	if err := ds[2].Enter(ctx); err != nil {
		t.Fatal(err)
	}
	for i, ch := range first {
		if err := await(t, ch, "Enter"); err != nil {
			t.Fatalf("member %d: %v", i, err)
		}
	}
	var left []<-chan error
	for _, d := range ds {
		left = append(left, async(func() error { return d.Leave(ctx) }))
	}
	for i, ch := range left {
		if err := await(t, ch, "Leave"); err != nil {
			t.Fatalf("member %d: Leave: %v", i, err)
		}
	}
	if kids := testkit.Children(t, obs, barrierPath); len(kids) != 0 {
		t.Fatalf("left behind: %v", kids)
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, cs...)
	// The handles enter again, for the next round.
	var again []<-chan error
	for _, d := range ds {
		again = append(again, async(func() error { return d.Enter(ctx) }))
	}
	for i, ch := range again {
		if err := await(t, ch, "second Enter"); err != nil {
			t.Fatalf("member %d: second round: %v", i, err)
		}
	}
}

// GH-1290: Curator's timed enter returns true after a single wake-up,
// a spurious one or a reconnection's SyncConnected, with one member of n
// present. Here one member of two is woken again and again (data changes
// of a stale ready node, left by an earlier round and older than the
// member, which is what Enter watches; connection cuts) and never passes:
// its deadline ends the wait, and its node and watch go.
func TestTimedEnterNeverPassesAlone(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns)
	obs := testkit.Connect(t, zkAddr, ns)
	if _, err := obs.Create(ctx, barrierPath+"/ready", nil, framework.CreatingParentContainers()); err != nil {
		t.Fatal(err)
	}
	d := barrier.NewDouble(c, barrierPath, 2)
	short, cancel := context.WithTimeout(ctx, 4*time.Second)
	defer cancel()
	done := async(func() error { return d.Enter(short) })
	testkit.Eventually(t, "the member waiting", func() bool { return len(members(t, obs)) == 1 })
	testkit.AwaitWatch(t, zkAddr, c, barrierPath+"/ready")
	wakeups := func() int64 { return barrier.Wakeups(d) }
	for i := 0; i < 3; i++ {
		before := wakeups()
		if _, err := obs.Set(ctx, barrierPath+"/ready", []byte(fmt.Sprint(i)), -1); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, "a wake-up by a data change", func() bool { return wakeups() > before })
		// Looked again and watches again (a change it saw in that look
		// would not wake it).
		testkit.AwaitWatch(t, zkAddr, c, barrierPath+"/ready")
	}
	before := wakeups()
	proxy.Cut()
	testkit.WaitState(t, c, connstate.Suspended)
	proxy.Restore()
	testkit.WaitState(t, c, connstate.Reconnected)
	testkit.Eventually(t, "a wake-up by the reconnection", func() bool { return wakeups() > before })
	err := await(t, done, "Enter")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Enter with 1 of 2 members = %v after %d wake-ups; want DeadlineExceeded", err, wakeups())
	}
	if m := members(t, obs); len(m) != 0 {
		t.Fatalf("a member that gave up left %v", m)
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, c)
}

// CURATOR-318 / CURATOR-233: members whose timed enter failed left their
// nodes, and a late member counted them and passed alone, so members of
// one round disagreed. Here the members that gave up leave no node: the
// late member does not pass either.
func TestMembersThatGaveUpLeaveNoNode(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	obs := testkit.Connect(t, zkAddr, ns)
	ds := doubles(t, ns, 3, 3)
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	a := async(func() error { return ds[0].Enter(short) })
	b := async(func() error { return ds[1].Enter(short) })
	for i, ch := range []<-chan error{a, b} {
		if err := await(t, ch, "Enter"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("member %d: %v; want DeadlineExceeded", i, err)
		}
	}
	if m := members(t, obs); len(m) != 0 {
		t.Fatalf("members that gave up left %v", m)
	}
	late, cancel2 := context.WithTimeout(ctx, time.Second)
	defer cancel2()
	if err := ds[2].Enter(late); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the late member alone: %v; want DeadlineExceeded", err)
	}
}

// Members of one round agree even when their deadlines pass as the last
// member arrives: either the barrier opened with them counted (every Enter
// returns nil, including one whose ctx ended at that moment) or it did
// not (every Enter fails and no node is left). Many rounds, with the last
// arrival around the deadline of the other two.
func TestMembersAgreeWhenDeadlinesMeetTheLastArrival(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	obs := testkit.Connect(t, zkAddr, ns)
	ds := doubles(t, ns, 3, 3)
	const deadline = 300 * time.Millisecond
	opened, closed := 0, 0
	for round := 0; round < 12; round++ {
		short, cancel := context.WithTimeout(ctx, deadline)
		a := async(func() error { return ds[0].Enter(short) })
		b := async(func() error { return ds[1].Enter(short) })
		// The last member arrives within 60ms either side of the others'
		// deadline, stepping through the window.
		lateCtx, cancelLate := context.WithTimeout(ctx, deadline)
		arrive := time.NewTimer(deadline - 60*time.Millisecond + time.Duration(round)*10*time.Millisecond)
		<-arrive.C
		c := ds[2].Enter(lateCtx)
		errs := []error{await(t, a, "Enter"), await(t, b, "Enter"), c}
		cancel()
		cancelLate()
		passed := 0
		for _, err := range errs {
			if err == nil {
				passed++
			}
		}
		switch passed {
		case 3:
			opened++
			var left []<-chan error
			for _, d := range ds {
				left = append(left, async(func() error { return d.Leave(ctx) }))
			}
			for i, ch := range left {
				if err := await(t, ch, "Leave"); err != nil {
					t.Fatalf("round %d: member %d Leave: %v", round, i, err)
				}
			}
		case 0:
			closed++
			if m := members(t, obs); len(m) != 0 {
				t.Fatalf("round %d: nobody passed, and %v are left", round, m)
			}
		default:
			t.Fatalf("round %d: members disagree: %v", round, errs)
		}
		testkit.Eventually(t, "an empty barrier", func() bool { return len(members(t, obs)) == 0 })
	}
	t.Logf("%d rounds opened, %d did not", opened, closed)
}

// CURATOR-536: with more members than n, a leave with a timeout looped
// forever in Curator. Here Leave returns at its deadline, having waited
// for events rather than spinning, and its node is gone.
func TestLeaveWithDeadlineNeverSpins(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	obs := testkit.Connect(t, zkAddr, ns)
	ds := doubles(t, ns, 3, 2)
	var entered []<-chan error
	for _, d := range ds {
		entered = append(entered, async(func() error { return d.Enter(ctx) }))
	}
	for i, ch := range entered {
		if err := await(t, ch, "Enter"); err != nil {
			t.Fatalf("member %d: %v", i, err)
		}
	}
	// A member that came after the barrier opened (its node made after
	// the ready node that opened it) is not of the round; which one does
	// depends on timing, and such a member may have replaced the ready
	// node since (it counted the round's members), so the round is the
	// members older than the first ready node a member was let in by.
	// Every member of the round but its last leaves with a deadline while
	// that last stays.
	first := barrier.Opened(ds[0])
	for _, d := range ds[1:] {
		first = min(first, barrier.Opened(d))
	}
	var round, late []*barrier.Double
	for _, d := range ds {
		st, err := obs.Exists(ctx, barrier.Node(d))
		if err != nil || st == nil {
			t.Fatalf("member node %s: %v, %v", barrier.Node(d), st, err)
		}
		if st.Czxid < first {
			round = append(round, d)
		} else {
			late = append(late, d)
		}
	}
	t.Logf("%d members in the round, %d came after it opened", len(round), len(late))
	if len(round) < 2 {
		t.Fatalf("a round of %d members opened a barrier for 2", len(round))
	}
	for i, d := range round[:len(round)-1] {
		start := time.Now()
		short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		err := d.Leave(short)
		cancel()
		took := time.Since(start)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("member %d: Leave while another stays = %v; want DeadlineExceeded", i, err)
		}
		if took > 2*time.Second {
			t.Fatalf("member %d: Leave took %v past a 500ms deadline", i, took)
		}
		if w := barrier.Wakeups(d); w > 3 {
			t.Fatalf("member %d: %d wake-ups in a Leave that only waited", i, w)
		}
		if slices.Contains(members(t, obs), barrier.Node(d)[len(barrierPath)+1:]) {
			t.Fatalf("member %d: node left after a failed Leave", i)
		}
	}
	// The round's last one leaves, and those who came late with it.
	var left []<-chan error
	for _, d := range append(round[len(round)-1:], late...) {
		left = append(left, async(func() error { return d.Leave(ctx) }))
	}
	for i, ch := range left {
		if err := await(t, ch, "Leave"); err != nil {
			t.Fatalf("last leaver %d: %v", i, err)
		}
	}
	if kids := testkit.Children(t, obs, barrierPath); len(kids) != 0 {
		t.Fatalf("left behind: %v", kids)
	}
}

// More members than n (the ready node not counted as one) all pass and all
// leave; Netflix Curator failed with "Count (4) is greater than memberQty".
func TestMoreThanNMembers(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	obs := testkit.Connect(t, zkAddr, ns)
	ds := doubles(t, ns, 5, 2)
	var entered []<-chan error
	for _, d := range ds {
		entered = append(entered, async(func() error { return d.Enter(ctx) }))
	}
	for i, ch := range entered {
		if err := await(t, ch, "Enter"); err != nil {
			t.Fatalf("member %d: %v", i, err)
		}
	}
	var left []<-chan error
	for _, d := range ds {
		left = append(left, async(func() error { return d.Leave(ctx) }))
	}
	for i, ch := range left {
		if err := await(t, ch, "Leave"); err != nil {
			t.Fatalf("member %d: Leave: %v", i, err)
		}
	}
	if kids := testkit.Children(t, obs, barrierPath); len(kids) != 0 {
		t.Fatalf("left behind: %v", kids)
	}
}

// A ready node left by a round whose members never left (their sessions
// ended after Enter) does not open the next round for a lone member, where
// Curator's enter passes on seeing it; the next full round replaces it and
// passes.
func TestStaleReadyDoesNotOpenNextRound(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	obs := testkit.Connect(t, zkAddr, ns)
	var old []*framework.Client
	var entered []<-chan error
	for i := 0; i < 2; i++ {
		c, err := framework.Connect(ctx, zkAddr, framework.WithNamespace(ns))
		if err != nil {
			t.Fatal(err)
		}
		old = append(old, c)
		d := barrier.NewDouble(c, barrierPath, 2)
		entered = append(entered, async(func() error { return d.Enter(ctx) }))
	}
	for _, ch := range entered {
		if err := await(t, ch, "Enter"); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range old {
		_ = c.Close() // crashed without leaving: their nodes go, ready stays
	}
	stale, err := obs.Exists(ctx, barrierPath+"/ready")
	if err != nil || stale == nil {
		t.Fatalf("the stale ready node: %v, %v", stale, err)
	}
	ds := doubles(t, ns, 2, 2)
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := ds[0].Enter(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a lone member with a stale ready: %v; want DeadlineExceeded", err)
	}
	entered = entered[:0]
	for _, d := range ds {
		entered = append(entered, async(func() error { return d.Enter(ctx) }))
	}
	for i, ch := range entered {
		if err := await(t, ch, "Enter"); err != nil {
			t.Fatalf("member %d of the next round: %v", i, err)
		}
	}
	fresh, err := obs.Exists(ctx, barrierPath+"/ready")
	if err != nil || fresh == nil || fresh.Czxid <= stale.Czxid {
		t.Fatalf("ready after the next round opened: %+v, %v; want a new node", fresh, err)
	}
}

// Enter's watch (of the barrier node and its children) is gone when Enter
// returns, and Leave watches one member node: the changes Enter waits for
// (the barrier node, its ready child) do not wake a Leave, and nothing of
// Enter's fires into it (Curator's enter and leave share one watcher, so
// they wake each other: apache/curator#416).
func TestEnterAndLeaveWatchersDoNotWakeEachOther(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	obs := testkit.Connect(t, zkAddr, ns)
	ds, cs := doublesAndClients(t, ns, 2, 2)
	var entered []<-chan error
	for _, d := range ds {
		entered = append(entered, async(func() error { return d.Enter(ctx) }))
	}
	for i, ch := range entered {
		if err := await(t, ch, "Enter"); err != nil {
			t.Fatalf("member %d: %v", i, err)
		}
	}
	// Nothing of Enter's is left to fire later.
	testkit.AwaitWatchCount(t, zkAddr, 0, cs...)
	m := members(t, obs)
	low, high, lowC := ds[0], ds[1], cs[0]
	if barrier.Node(low) != barrierPath+"/"+m[0] {
		low, high, lowC = ds[1], ds[0], cs[1]
	}
	before := barrier.Wakeups(low)
	leaving := async(func() error { return low.Leave(ctx) })
	// The lowest waits on the highest member's node alone.
	testkit.AwaitWatch(t, zkAddr, lowC, barrier.Node(high))
	if n := testkit.WatchCount(t, zkAddr, lowC); n != 1 {
		t.Fatalf("the leaving member holds %d watches; want the one on the highest member", n)
	}
	// Enter-side changes: the barrier node's data, the ready node.
	if _, err := obs.Set(ctx, barrierPath, []byte("x"), -1); err != nil {
		t.Fatal(err)
	}
	if err := obs.Delete(ctx, barrierPath+"/ready"); err != nil {
		t.Fatal(err)
	}
	if _, err := obs.Create(ctx, barrierPath+"/ready", nil); err != nil {
		t.Fatal(err)
	}
	if err := obs.Sync(ctx, barrierPath); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-leaving:
		t.Fatalf("the lowest left while the highest was in: %v", err)
	default:
	}
	if got := barrier.Wakeups(low) - before; got != 0 {
		t.Fatalf("enter-side changes woke a Leave %d times", got)
	}
	if err := high.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	if err := await(t, leaving, "Leave"); err != nil {
		t.Fatal(err)
	}
}
