package barrier_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/barrier"
	"github.com/gocurator/curator/zktest"
)

// Pitfall 25: an Enter whose ctx ends at any point (before its member
// node's create is sent, while it is in flight on a slow link, while the
// member waits) returns ctx's error and leaves no member node, not even
// one whose create lands after the caller moved on: such a node would be
// counted by the next round's members (a member that is not there). Each
// try cancels at a different point; a request sent afterwards on the same
// connection (answered after everything sent before it) marks when every
// write of the cancelled Enter has landed.
func TestCancelledEnterLeavesNoMember(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns)
	obs := testkit.Connect(t, zkAddr, ns)
	proxy.SetDelay(30 * time.Millisecond)
	for i := 0; i < 24; i++ {
		d := barrier.NewDouble(c, barrierPath, 2)
		ctx, cancel := context.WithCancel(testkit.Ctx(t))
		stop := time.AfterFunc(time.Duration(i)*8*time.Millisecond, cancel)
		err := d.Enter(ctx)
		stop.Stop()
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("try %d: Enter with 1 of 2 = %v; want Canceled", i, err)
		}
		if _, err := c.Exists(testkit.Ctx(t), barrierPath); err != nil {
			t.Fatal(err)
		}
		if m := members(t, obs); len(m) != 0 {
			t.Fatalf("try %d (cancelled after %v): a cancelled Enter left %v", i, time.Duration(i)*8*time.Millisecond, m)
		}
	}
	proxy.SetDelay(0)
	testkit.AwaitWatchCount(t, zkAddr, 0, c)
}

// The same while the connection is down: the create waits for a
// connection, ctx ends, Enter returns; once the connection is back no
// member node of the cancelled Enter may be there (its clean-up went to
// the background, and a create still queued must not land after it).
func TestEnterCancelledWhileDisconnectedLeavesNoMember(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns)
	obs := testkit.Connect(t, zkAddr, ns)
	d := barrier.NewDouble(c, barrierPath, 2)
	proxy.Cut()
	short, cancel := context.WithTimeout(testkit.Ctx(t), 300*time.Millisecond)
	defer cancel()
	if err := d.Enter(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Enter while disconnected = %v; want DeadlineExceeded", err)
	}
	proxy.Restore()
	testkit.Eventually(t, "no member", func() bool { return len(members(t, obs)) == 0 })
	if _, err := c.Exists(testkit.Ctx(t), barrierPath); err != nil { // after all sent before
		t.Fatal(err)
	}
	if m := members(t, obs); len(m) != 0 {
		t.Fatalf("a member node landed after the cancelled Enter: %v", m)
	}
	// A member of the next round is not let through by it.
	other := barrier.NewDouble(obs, barrierPath, 2)
	short2, cancel2 := context.WithTimeout(testkit.Ctx(t), 500*time.Millisecond)
	defer cancel2()
	if err := other.Enter(short2); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a lone member = %v; want DeadlineExceeded", err)
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, c, obs)
}

// A member's node deleted in the background (a Leave whose ctx ended while
// disconnected leaves that delete behind) must not take the node of the
// handle's next Enter: each Enter after the first makes its node under a
// name of its own, so the late delete finds nothing to delete. The next
// membership is checked on the server once every request sent before a
// later one has been answered.
func TestBackgroundDeleteSparesTheNextEnter(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns, framework.WithErrorPolicy(connstate.SessionPolicy{}))
	obs := testkit.Connect(t, zkAddr, ns)
	d := barrier.NewDouble(c, barrierPath, 1)
	for i := 0; i < 3; i++ {
		if err := d.Enter(ctx); err != nil {
			t.Fatal(err)
		}
		proxy.Cut()
		testkit.WaitState(t, c, connstate.Suspended)
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		err := d.Leave(short)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Leave while disconnected = %v; want DeadlineExceeded", err)
		}
		proxy.Restore()
		testkit.WaitState(t, c, connstate.Reconnected)
		if err := d.Enter(ctx); err != nil {
			t.Fatal(err)
		}
		node := barrier.Node(d)
		testkit.Eventually(t, "the background delete done", func() bool {
			ms := members(t, obs)
			return len(ms) <= 1
		})
		if _, err := c.Exists(ctx, barrierPath); err != nil { // after all sent before
			t.Fatal(err)
		}
		if st, err := obs.Exists(ctx, node); err != nil || st == nil {
			t.Fatalf("round %d: the entered member's node %s is gone (%v): a late delete took it while Err is %v", i, node, err, d.Err())
		}
		if err := d.Leave(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// Pitfall 25 for Barrier: a Remove (or Set) whose ctx ends at any point is
// never applied after the caller moved on: the Set (or Remove) that
// follows it is the state that stays once every request sent before a
// later one has been answered. A late Remove would open a barrier its
// owner had just closed again.
func TestCancelledBarrierWritesAreNotAppliedLater(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns)
	obs := testkit.Connect(t, zkAddr, ns)
	b := barrier.New(c, "/gate")
	proxy.SetDelay(30 * time.Millisecond)
	for i := 0; i < 16; i++ {
		closing := i%2 == 0 // cancel a Remove, then Set; or the other way
		ctx, cancel := context.WithCancel(testkit.Ctx(t))
		stop := time.AfterFunc(time.Duration(i/2)*10*time.Millisecond, cancel)
		var err error
		if closing {
			err = b.Remove(ctx)
		} else {
			err = b.Set(ctx)
		}
		stop.Stop()
		cancel()
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("try %d: %v", i, err)
		}
		if closing {
			err = b.Set(testkit.Ctx(t))
		} else {
			err = b.Remove(testkit.Ctx(t))
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Exists(testkit.Ctx(t), "/gate"); err != nil { // after all sent before
			t.Fatal(err)
		}
		st, err := obs.Exists(testkit.Ctx(t), "/gate")
		if err != nil {
			t.Fatal(err)
		}
		if (st != nil) != closing {
			t.Fatalf("try %d: closed %v after the last call, which should leave it closed %v: a cancelled call landed later", i, st != nil, closing)
		}
	}
}
