package barrier_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/barrier"
	"github.com/gocurator/curator/zktest"
)

// closed reports whether ch is closed now.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// An entered member holds its place in the round (its node), and, like a
// lock's hold, it is told when the connection takes that place away: a
// member that went on computing after its session was lost would overlap
// the next round, since nobody counts it or waits for it. Done closes, Err
// wraps ErrMemberLost, the node is deleted once the connection is back, and
// Leave reports the loss after leaving.
func TestEnteredMemberIsToldOfItsLoss(t *testing.T) {
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns)
	observer := testkit.Connect(t, zkAddr, ns)
	d := barrier.NewDouble(c, barrierPath, 1)

	if !closed(d.Done()) || !errors.Is(d.Err(), barrier.ErrNotEntered) {
		t.Fatalf("before Enter: Done closed %v, Err %v; want closed, ErrNotEntered", closed(d.Done()), d.Err())
	}
	if err := d.Enter(ctx); err != nil {
		t.Fatal(err)
	}
	done := d.Done()
	if closed(done) || d.Err() != nil {
		t.Fatalf("entered: Done closed %v, Err %v; want open, nil", closed(done), d.Err())
	}

	proxy.Cut() // Suspended: an error under the standard ErrorPolicy
	select {
	case <-done:
	case <-time.After(testkit.Deadline):
		t.Fatal("Done still open after the connection was cut")
	}
	if err := d.Err(); !errors.Is(err, barrier.ErrMemberLost) {
		t.Fatalf("Err after the cut = %v, want ErrMemberLost", err)
	}
	if err := d.Enter(ctx); !errors.Is(err, barrier.ErrMemberLost) {
		t.Fatalf("Enter of a lost member = %v, want ErrMemberLost (Leave first)", err)
	}
	proxy.Restore()
	testkit.Eventually(t, "the lost member's node deleted", func() bool {
		return len(members(t, observer)) == 0
	})
	if err := d.Leave(ctx); !errors.Is(err, barrier.ErrMemberLost) {
		t.Fatalf("Leave after the loss = %v, want ErrMemberLost", err)
	}
	if !errors.Is(d.Err(), barrier.ErrNotEntered) {
		t.Fatalf("Err after Leave = %v, want ErrNotEntered", d.Err())
	}
	// The handle enters again.
	if err := d.Enter(ctx); err != nil {
		t.Fatal(err)
	}
	if d.Err() != nil {
		t.Fatalf("entered again: Err %v", d.Err())
	}
	if err := d.Leave(ctx); err != nil {
		t.Fatal(err)
	}
}

// Leave ends the membership: Done closes and Err says not entered.
func TestLeaveClosesDone(t *testing.T) {
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, ns)
	d := barrier.NewDouble(c, barrierPath, 1)
	if err := d.Enter(ctx); err != nil {
		t.Fatal(err)
	}
	done := d.Done()
	if err := d.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	if !closed(done) || !errors.Is(d.Err(), barrier.ErrNotEntered) {
		t.Fatalf("after Leave: Done closed %v, Err %v", closed(done), d.Err())
	}
}

// Close ends an entered member's membership before the session ends, with
// framework.ErrClosed, as it ends every hold.
func TestCloseEndsMembership(t *testing.T) {
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	c, err := framework.Connect(ctx, zkAddr, framework.WithNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	d := barrier.NewDouble(c, barrierPath, 1)
	if err := d.Enter(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if !closed(d.Done()) || !errors.Is(d.Err(), framework.ErrClosed) {
		t.Fatalf("after Close: Done closed %v, Err %v; want closed, ErrClosed", closed(d.Done()), d.Err())
	}
}
