package node_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/node"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/zktest"
	"go.uber.org/zap/zaptest"
)

// Pitfall 21 (CURATOR-154): the session expires while its node still
// exists on the server (the client declares Lost at half the session
// timeout, the server expires the session at the full timeout). In the
// new session the Node must not adopt the old node: it reports
// Recreating(ErrSessionLost), watches the old node go, and only then makes
// and reports its own. Every Registered event names the session that owns
// the node on the server.
func TestSessionExpiryNeverAdoptsTheDeadSessionsNode(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns,
		framework.WithSessionTimeout(4*time.Second), framework.WithSessionExpiryPercent(50),
		framework.WithRetryPolicy(retry.NTimes(100, 100*time.Millisecond)))
	admin := testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
	n := node.New(c, "/members/m1", []byte("m1"), node.WithLogger(zaptest.NewLogger(t)))
	defer closeNode(t, n)
	rec := record(t, n)
	start(t, n)
	old := c.SessionID()
	oldCzxid := n.Status().Czxid
	_, watchC, err := admin.ExistsW(ctx, "/members/m1")
	if err != nil {
		t.Fatal(err)
	}

	proxy.Cut()
	_, i := rec.await(t, 0, "Recreating(ErrSessionLost)", recreating(node.ErrSessionLost))
	if n.Registered() {
		t.Fatal("Registered after the session was lost")
	}
	if st := stat(t, admin, "/members/m1"); st == nil || st.EphemeralOwner != old {
		t.Fatalf("the old node should still be there (owner 0x%x): %+v", old, st)
	}
	proxy.Restore()
	testkit.WaitState(t, c, connstate.Reconnected)
	// The new session lives while the old node is there: still not ours.
	if n.Registered() {
		if st := stat(t, admin, "/members/m1"); st == nil || st.EphemeralOwner != c.SessionID() {
			t.Fatalf("Registered while the node is %+v (live session 0x%x)", st, c.SessionID())
		}
	}
	select {
	case <-watchC:
	case <-time.After(testkit.Deadline):
		t.Fatal("the old node never went")
	}
	ev, _ := rec.await(t, i, "registered in the new session", registered)
	live := c.SessionID()
	if ev.Session != live || ev.Session == old || ev.Czxid == oldCzxid {
		t.Fatalf("registered %+v; live session 0x%x, old 0x%x", ev, live, old)
	}
	st := stat(t, admin, "/members/m1")
	if st == nil || st.EphemeralOwner != live || st.Czxid != ev.Czxid {
		t.Fatalf("node %+v, want owner 0x%x czxid %d", st, live, ev.Czxid)
	}
	for _, e := range rec.all() {
		if e.State == node.Registered && e.Czxid == oldCzxid && e.Session != old {
			t.Fatalf("the dead session's node was reported as ours: %+v", e)
		}
	}
}

// Two processes with the same path: with FailIfOwned the second's Start
// fails with ErrOwnedByOtherSession, naming the owner, and leaves the
// first's node, data and all.
func TestSecondOwnerIsRefused(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	c1 := testkit.Connect(t, zkAddr, ns)
	c2 := testkit.Connect(t, zkAddr, ns)
	first := node.New(c1, "/id", []byte("first"))
	defer closeNode(t, first)
	start(t, first)
	second := node.New(c2, "/id", []byte("second"), node.FailIfOwned())
	err := second.Start(testkit.Ctx(t))
	if !errors.Is(err, node.ErrOwnedByOtherSession) || !strings.Contains(err.Error(), fmt.Sprintf("0x%x", c1.SessionID())) {
		t.Fatalf("second Start = %v, want ErrOwnedByOtherSession naming 0x%x", err, c1.SessionID())
	}
	if second.Registered() || second.Status().State != node.Idle {
		t.Fatalf("second after a failed Start: %+v", second.Status())
	}
	if got := data(t, c2, "/id"); got != "first" {
		t.Fatalf("data %q: the second overwrote the first's node", got)
	}
	if st := stat(t, c2, "/id"); st.EphemeralOwner != c1.SessionID() {
		t.Fatalf("owner 0x%x, want the first 0x%x", st.EphemeralOwner, c1.SessionID())
	}
	closeNode(t, second)
	if st := stat(t, c2, "/id"); st == nil {
		t.Fatal("the second's Close deleted the first's node")
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, c2)
}

// With WaitForOwner the second waits for the first's node to go (watching
// it), then registers.
func TestWaitForOwner(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	c1 := testkit.Connect(t, zkAddr, ns)
	c2 := testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
	first := node.New(c1, "/id", []byte("first"))
	start(t, first)
	second := node.New(c2, "/id", []byte("second"), node.WaitForOwner())
	defer closeNode(t, second)
	rec2 := record(t, second)
	done := make(chan error, 1)
	go func() { done <- second.Start(ctx) }()
	rec2.await(t, 0, "second waiting on the owner", func(ev node.Event) bool {
		return ev.State == node.Creating && errors.Is(ev.Reason, node.ErrOwnedByOtherSession)
	})
	if got := data(t, c2, "/id"); got != "first" || second.Registered() {
		t.Fatalf("while waiting: data %q, registered %v", got, second.Registered())
	}
	closeNode(t, first)
	if err := <-done; err != nil {
		t.Fatalf("second Start: %v", err)
	}
	st := stat(t, c1, "/id")
	if st == nil || st.EphemeralOwner != c2.SessionID() || data(t, c1, "/id") != "second" {
		t.Fatalf("node %+v, want the second's", st)
	}
}

// A Node whose session expired finds, in its new session, that another
// process registered the path meanwhile: it reports
// Recreating(ErrOwnedByOtherSession), waits, never overwrites the other's
// node, and registers once the other leaves.
func TestPathTakenWhileSessionLost(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c1 := testkit.Connect(t, proxy.Addr(), ns, framework.WithSessionTimeout(2*time.Second),
		framework.WithRetryPolicy(retry.NTimes(100, 100*time.Millisecond)))
	c2 := testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
	first := node.New(c1, "/id", []byte("first"))
	defer closeNode(t, first)
	rec1 := record(t, first)
	start(t, first)
	second := node.New(c2, "/id", []byte("second"), node.WaitForOwner())
	defer closeNode(t, second)
	done := make(chan error, 1)
	go func() { done <- second.Start(ctx) }()
	proxy.Cut() // the server expires the first's session; the second registers
	if err := <-done; err != nil {
		t.Fatalf("second Start: %v", err)
	}
	_, i := rec1.await(t, 0, "first lost its session", recreating(node.ErrSessionLost))
	proxy.Restore()
	_, i = rec1.await(t, i, "first waiting on the second", recreating(node.ErrOwnedByOtherSession))
	if first.Registered() {
		t.Fatal("first reports Registered on the second's node")
	}
	if got := data(t, c2, "/id"); got != "second" {
		t.Fatalf("data %q: the first overwrote the second's node", got)
	}
	closeNode(t, second)
	ev, _ := rec1.await(t, i, "first registered again", registered)
	if ev.Session != c1.SessionID() {
		t.Fatalf("first registered %+v, live session 0x%x", ev, c1.SessionID())
	}
	for _, e := range rec1.all()[:i] {
		if e.State == node.Registered && e.Session != ev.Session && e.Czxid != rec1.all()[1].Czxid {
			t.Fatalf("first registered on a node not its own: %+v", e)
		}
	}
}
