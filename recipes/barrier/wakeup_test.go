package barrier_test

import (
	"context"
	"errors"
	"fmt"
	stdatomic "sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/barrier"
	"github.com/gocurator/curator/zktest"
)

// lowHigh returns two members of a barrier of 2 whose nodes sort low then
// high, high on highClient: names are chosen at NewDouble, so draw until
// they sort that way.
func lowHigh(t *testing.T, lowClient, highClient *framework.Client) (low, high *barrier.Double) {
	t.Helper()
	high = barrier.NewDouble(highClient, barrierPath, 2)
	for {
		low = barrier.NewDouble(lowClient, barrierPath, 2)
		if barrier.Node(low) < barrier.Node(high) {
			return low, high
		}
	}
}

// enterBoth enters both members of a barrier of 2.
func enterBoth(t *testing.T, a, b *barrier.Double) {
	t.Helper()
	ctx := testkit.Ctx(t)
	ea, eb := async(func() error { return a.Enter(ctx) }), async(func() error { return b.Enter(ctx) })
	for _, ch := range []<-chan error{ea, eb} {
		if err := await(t, ch, "Enter"); err != nil {
			t.Fatal(err)
		}
	}
}

// awaitWokenAndWaiting waits until d's wait woke (its wake-up count passed
// woken) and then until either Leave returned (a failure: the lowest
// member never left) or d began to wait again (its wait count passed
// waited).
func awaitWokenAndWaiting(t *testing.T, d *barrier.Double, woken, waited int64, left <-chan error) {
	t.Helper()
	testkit.Eventually(t, "the leaving member woke", func() bool { return barrier.Wakeups(d) > woken })
	var returned bool
	var err error
	testkit.Eventually(t, "Leave returned, or waits again for the lowest", func() bool {
		select {
		case err = <-left:
			returned = true
			return true
		default:
		}
		return barrier.LeaveWaits(d) > waited
	})
	if returned {
		t.Fatalf("Leave returned %v after a wake-up while the lowest member had not left", err)
	}
}

// Issue 33 item 3 (GH-1290's pattern in Leave, pitfall 26): a member that
// does not sort first deletes its node and waits for the lowest; a
// reconnection (a 300 ms cut), a new session (its old one expired while
// partitioned) or a server restart wakes it, and it must look again and
// go on waiting, not return while the lowest member, which never called
// Leave, is still in. Before the fix Leave returned nil on the wake-up.
func TestLeaveWakeUpIsNotTheLowestLeaving(t *testing.T) {
	t.Parallel()
	t.Run("reconnect", func(t *testing.T) {
		t.Parallel()
		proxy := zktest.NewProxy(t, zkAddr)
		leaveSurvives(t, zkAddr, proxy.Addr(), nil, func(hc *framework.Client) {
			proxy.Cut()
			testkit.WaitState(t, hc, connstate.Suspended)
			proxy.Restore()
			testkit.WaitState(t, hc, connstate.Reconnected)
		})
	})
	t.Run("new session", func(t *testing.T) {
		t.Parallel()
		proxy := zktest.NewProxy(t, zkAddr)
		leaveSurvives(t, zkAddr, proxy.Addr(), []framework.Option{framework.WithSessionTimeout(3 * time.Second)},
			func(hc *framework.Client) {
				old := hc.SessionID()
				proxy.BlackHole()
				testkit.WaitState(t, hc, connstate.Lost)
				proxy.Restore()
				testkit.Eventually(t, "a new session", func() bool {
					return hc.State() == connstate.Reconnected && hc.SessionID() != old
				})
			})
	})
	t.Run("server restart", func(t *testing.T) {
		t.Parallel()
		srv := zktest.StartServer(t)
		// The lowest keeps its place across the outage (SessionPolicy).
		leaveSurvives(t, srv.Addr(), srv.Addr(), []framework.Option{framework.WithErrorPolicy(connstate.SessionPolicy{})},
			func(hc *framework.Client) {
				if err := srv.Restart(); err != nil {
					t.Fatal(err)
				}
				testkit.WaitState(t, hc, connstate.Reconnected)
			})
	})
}

// leaveSurvives enters two members of a barrier of 2 (the high one on
// highAddr), has the high one Leave, wakes it with fault, and checks that
// it waits again for the low one, which then leaves: both return and
// nothing is left.
func leaveSurvives(t *testing.T, lowAddr, highAddr string, opts []framework.Option, fault func(hc *framework.Client)) {
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	hc := testkit.Connect(t, highAddr, ns, opts...)
	lc := testkit.Connect(t, lowAddr, ns, opts...)
	obs := testkit.Connect(t, lowAddr, ns)
	low, high := lowHigh(t, lc, hc)
	enterBoth(t, low, high)

	woken := barrier.Wakeups(high)
	left := async(func() error { return high.Leave(ctx) })
	testkit.Eventually(t, "Leave waiting", func() bool { return barrier.LeaveWaits(high) == 1 })
	testkit.AwaitWatch(t, lowAddr, hc, barrier.Node(low))
	fault(hc)
	awaitWokenAndWaiting(t, high, woken, 1, left)
	if err := low.Err(); err != nil {
		t.Fatalf("the lowest lost its place: %v", err)
	}

	if err := low.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	if err := await(t, left, "Leave"); err != nil {
		t.Fatal(err)
	}
	if kids := testkit.Children(t, obs, barrierPath); len(kids) != 0 {
		t.Fatalf("left behind: %v", kids)
	}
	testkit.AwaitWatchCount(t, lowAddr, 0, hc, lc)
}

// Back-to-back rounds with no pause between Enter and Leave, each member
// entering the next round as soon as its Leave returns: Curator's double
// barrier hangs in enter() now and then here (a lost wake-up, ~4 in 2,000
// rounds), and a Leave that waited for the next round's entrants or
// deleted the next round's ready node would hang it too. Every round is
// bounded, and the rounds are checked: a member passes Enter of round k
// only once every member has called it, and Leave of round k only once
// every member has called that.
func TestBackToBackRounds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ members, rounds int }{{3, 200}, {4, 150}} {
		t.Run(fmt.Sprintf("%d members", tc.members), func(t *testing.T) {
			t.Parallel()
			backToBack(t, tc.members, tc.rounds)
		})
	}
}

func backToBack(t *testing.T, members, rounds int) {
	ns := testkit.Unique(t)
	ds, cs := doublesAndClients(t, ns, members, members)
	entering := make([]stdatomic.Int64, members)
	leaving := make([]stdatomic.Int64, members)
	check := func(what string, i, k int, started []stdatomic.Int64) error {
		for j := range started {
			if got := started[j].Load(); got < int64(k) {
				return fmt.Errorf("member %d passed %s of round %d while member %d had called it %d times", i, what, k, j, got)
			}
		}
		return nil
	}
	var g errgroup.Group
	for i, d := range ds {
		g.Go(func() error {
			for k := 1; k <= rounds; k++ {
				ctx, cancel := context.WithTimeout(context.Background(), testkit.Deadline)
				entering[i].Store(int64(k))
				err := d.Enter(ctx)
				if err == nil {
					err = check("Enter", i, k, entering)
				}
				if err == nil {
					leaving[i].Store(int64(k))
					err = d.Leave(ctx)
				}
				if err == nil {
					err = check("Leave", i, k, leaving)
				}
				cancel()
				if err != nil {
					return fmt.Errorf("member %d, round %d: %w", i, k, err)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	obs := testkit.Connect(t, zkAddr, ns)
	testkit.Eventually(t, "an empty barrier", func() bool { return len(testkit.Children(t, obs, barrierPath)) == 0 })
	testkit.AwaitWatchCount(t, zkAddr, 0, cs...)
}

// A wake-up is not the condition (pitfall 26) for Barrier.Wait either: a
// reconnection, or a new session after the old one expired, wakes a
// waiter while the barrier's node is still there, and Wait must go on
// waiting (the node's existence is held across the window by the admin,
// on a client of its own); it returns once the node is removed.
func TestBarrierWaitWakeUpIsNotTheBarrierOpening(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		opts    []framework.Option
		newSess bool
	}{
		{"reconnect", nil, false},
		{"new session", []framework.Option{framework.WithSessionTimeout(3 * time.Second)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := testkit.Ctx(t)
			ns := testkit.Unique(t)
			proxy := zktest.NewProxy(t, zkAddr)
			wc := testkit.Connect(t, proxy.Addr(), ns, tc.opts...)
			admin := barrier.New(testkit.Connect(t, zkAddr, ns), "/gate")
			if err := admin.Set(ctx); err != nil {
				t.Fatal(err)
			}
			b := barrier.New(wc, "/gate")
			waited := async(func() error { return b.Wait(ctx) })
			testkit.AwaitWatch(t, zkAddr, wc, "/gate")
			before := barrier.BarrierWakeups(b)
			old := wc.SessionID()
			if tc.newSess {
				proxy.BlackHole()
				testkit.WaitState(t, wc, connstate.Lost)
			} else {
				proxy.Cut()
				testkit.WaitState(t, wc, connstate.Suspended)
			}
			proxy.Restore()
			testkit.Eventually(t, "reconnected", func() bool {
				return wc.State() == connstate.Reconnected && (!tc.newSess || wc.SessionID() != old)
			})
			testkit.Eventually(t, "the waiter woke", func() bool { return barrier.BarrierWakeups(b) > before })
			// Woken; it looks again, finds the node and waits again on
			// the watch of its (possibly new) session.
			testkit.AwaitWatch(t, zkAddr, wc, "/gate")
			select {
			case err := <-waited:
				t.Fatalf("Wait returned %v after a wake-up while the barrier was set", err)
			default:
			}
			if err := admin.Remove(ctx); err != nil {
				t.Fatal(err)
			}
			if err := await(t, waited, "Wait"); err != nil {
				t.Fatal(err)
			}
			testkit.AwaitWatchCount(t, zkAddr, 0, wc)
		})
	}
}

// GH-1290 for a new session and a server restart (the reconnection case is
// TestTimedEnterNeverPassesAlone): a member waiting alone in a barrier of 2
// is woken and must not pass. After its session expired its node is gone:
// Enter fails with ErrMemberLost and leaves nothing. After a restart its
// session (and node) live on: it waits again, and passes with the second.
func TestEnterWakeUpIsNotTheSecondMember(t *testing.T) {
	t.Parallel()
	t.Run("new session", func(t *testing.T) {
		t.Parallel()
		ctx := testkit.Ctx(t)
		ns := testkit.Unique(t)
		proxy := zktest.NewProxy(t, zkAddr)
		c := testkit.Connect(t, proxy.Addr(), ns, framework.WithSessionTimeout(3*time.Second))
		obs := testkit.Connect(t, zkAddr, ns)
		d := barrier.NewDouble(c, barrierPath, 2)
		entered := async(func() error { return d.Enter(ctx) })
		testkit.Eventually(t, "the member waiting", func() bool { return len(members(t, obs)) == 1 })
		old := c.SessionID()
		proxy.BlackHole()
		testkit.WaitState(t, c, connstate.Lost)
		proxy.Restore()
		testkit.Eventually(t, "a new session", func() bool { return c.SessionID() != old && c.State() == connstate.Reconnected })
		if err := await(t, entered, "Enter"); !errors.Is(err, barrier.ErrMemberLost) {
			t.Fatalf("Enter after its session expired = %v; want ErrMemberLost", err)
		}
		testkit.Eventually(t, "no member", func() bool { return len(members(t, obs)) == 0 })
		testkit.AwaitWatchCount(t, zkAddr, 0, c)
	})
	t.Run("server restart", func(t *testing.T) {
		t.Parallel()
		ctx := testkit.Ctx(t)
		ns := testkit.Unique(t)
		srv := zktest.StartServer(t)
		c := testkit.Connect(t, srv.Addr(), ns)
		d := barrier.NewDouble(c, barrierPath, 2)
		entered := async(func() error { return d.Enter(ctx) })
		testkit.Eventually(t, "the member waiting", func() bool { return len(members(t, c)) == 1 })
		woken := barrier.Wakeups(d)
		if err := srv.Restart(); err != nil {
			t.Fatal(err)
		}
		testkit.WaitState(t, c, connstate.Reconnected)
		testkit.Eventually(t, "the member woke", func() bool { return barrier.Wakeups(d) > woken })
		testkit.AwaitWatch(t, srv.Addr(), c, barrierPath+"/ready")
		select {
		case err := <-entered:
			t.Fatalf("Enter returned %v after a restart with 1 of 2", err)
		default:
		}
		second := barrier.NewDouble(testkit.Connect(t, srv.Addr(), ns), barrierPath, 2)
		if err := second.Enter(ctx); err != nil {
			t.Fatal(err)
		}
		if err := await(t, entered, "Enter"); err != nil {
			t.Fatal(err)
		}
		left := async(func() error { return d.Leave(ctx) })
		if err := second.Leave(ctx); err != nil {
			t.Fatal(err)
		}
		if err := await(t, left, "Leave"); err != nil {
			t.Fatal(err)
		}
	})
}
