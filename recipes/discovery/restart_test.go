package discovery_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/discovery"
	"github.com/gocurator/curator/zktest"
)

// A service restarted before its previous process's session expired finds
// its own id held by that session's node. ZooKeeper cannot tell a dead
// session from a live one until it expires, so the restarted process
// must treat the node as another session's: by default it waits for the
// server to delete it, then registers in its own session (item 14: it no
// longer stops with "node owned by another session"). It never adopts the
// old node (whose session will take it away) and never deletes it
// (Curator does, and so deletes a live duplicate's registration too).
func TestRestartedProcessWaitsForItsDeadSessionsNode(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	const path = "/services/orders/o-1"
	proxy := zktest.NewProxy(t, zkAddr)
	prev := testkit.Connect(t, proxy.Addr(), ns, framework.WithSessionTimeout(3*time.Second))
	prevD := discovery.New(prev, "/services")
	if err := prevD.Register(ctx, instance("orders", "o-1", 1)); err != nil {
		t.Fatal(err)
	}
	watcher := testkit.Connect(t, zkAddr, ns)
	oldData, old := get(t, watcher, path)
	events, err := watcher.Watch(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = events.Close() })

	c := testkit.Connect(t, zkAddr, ns)
	next := instance("orders", "o-1", 2)

	// While the old session lives, the restarted process waits (the
	// default) until its ctx ends, with an error that matches both the
	// deadline and ErrOwnedByOtherSession and names the owner, or with
	// FailIfOwned is refused at once; either way the node is left as it
	// was and nothing is left behind: no registration, no watch.
	plain := open(t, c, "/services", discovery.FailIfOwned())
	if err := plain.Register(ctx, next); !errors.Is(err, discovery.ErrOwnedByOtherSession) {
		t.Fatalf("Register with FailIfOwned over a live session's node: %v, want ErrOwnedByOtherSession", err)
	}
	d := open(t, c, "/services")
	short, cancel := context.WithTimeout(ctx, time.Second)
	err = d.Register(short, next)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, discovery.ErrOwnedByOtherSession) ||
		!strings.Contains(err.Error(), fmt.Sprintf("%x", prev.SessionID())) {
		t.Fatalf("Register over a live session's node: %v, want the deadline and ErrOwnedByOtherSession naming 0x%x", err, prev.SessionID())
	}
	if data, st := get(t, watcher, path); st.Czxid != old.Czxid || st.EphemeralOwner != old.EphemeralOwner || !bytes.Equal(data, oldData) {
		t.Fatalf("the live session's node was touched: owner 0x%x czxid %d, was 0x%x %d", st.EphemeralOwner, st.Czxid, old.EphemeralOwner, old.Czxid)
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, c)

	// The previous process dies: its connection goes silent (no close
	// of the session reaches the server), and its node stays until the
	// server expires the session.
	proxy.BlackHole()
	_ = prev.Close()
	_ = prevD.Close(ctx)
	done := make(chan error, 1)
	go func() { done <- d.Register(ctx, next) }()
	var err2 error
	select {
	case err2 = <-done:
	case <-time.After(testkit.Deadline):
		t.Fatal("Register did not return after the old session expired")
	}
	if err2 != nil {
		t.Fatalf("Register after the old session expired: %v", err2)
	}
	data, st := get(t, watcher, path)
	if st.EphemeralOwner != c.SessionID() || st.Czxid == old.Czxid {
		t.Fatalf("the old node was adopted: owner 0x%x czxid %d (old session 0x%x, czxid %d; ours 0x%x)",
			st.EphemeralOwner, st.Czxid, old.EphemeralOwner, old.Czxid, c.SessionID())
	}
	want := next
	want.ServiceType = discovery.Dynamic
	if b, _ := want.MarshalJSON(); !bytes.Equal(data, b) {
		t.Fatalf("registered\n %s\nwant\n %s", data, b)
	}
	// The watcher saw the old node deleted (by the expiry) before ours
	// was created: never a moment with two, never ours under the old one.
	var seen []framework.WatchEventType
	for len(seen) < 2 {
		select {
		case ev := <-events.Events():
			if ev.Path == path && (ev.Type == framework.WatchDeleted || ev.Type == framework.WatchCreated) {
				seen = append(seen, ev.Type)
			}
		case <-time.After(testkit.Deadline):
			t.Fatalf("events %v, want deleted then created", seen)
		}
	}
	if seen[0] != framework.WatchDeleted || seen[1] != framework.WatchCreated {
		t.Fatalf("events %v, want deleted then created", seen)
	}
}

// TakeOver is Curator's way for a restarted process: the previous
// session's node is deleted at Register and ours made at once, without
// waiting for the old session to expire. And the error of a wait cut
// short names this package's options, not only node's.
func TestRestartedProcessTakesOverWithTakeOver(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	const path = "/services/orders/o-1"
	proxy := zktest.NewProxy(t, zkAddr)
	prev := testkit.Connect(t, proxy.Addr(), ns, framework.WithSessionTimeout(20*time.Second))
	prevD := discovery.New(prev, "/services")
	// Its node's goroutines end with its Close; its deletes cannot land.
	t.Cleanup(func() { _ = prevD.Close(withTimeout(t, time.Second)) })
	if err := prevD.Register(ctx, instance("orders", "o-1", 1)); err != nil {
		t.Fatal(err)
	}
	proxy.BlackHole() // the process dies; its session lives on for 20 s
	c := testkit.Connect(t, zkAddr, ns)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	err := open(t, c, "/services").Register(short, instance("orders", "o-1", 2))
	cancel()
	if !errors.Is(err, discovery.ErrOwnedByOtherSession) || !strings.Contains(err.Error(), "discovery.TakeOver") {
		t.Fatalf("a wait cut short: %v, want ErrOwnedByOtherSession naming discovery.TakeOver", err)
	}
	d := open(t, c, "/services", discovery.TakeOver())
	if err := d.Register(withTimeout(t, 5*time.Second), instance("orders", "o-1", 2)); err != nil {
		t.Fatalf("Register with TakeOver: %v", err)
	}
	data, st := get(t, c, path)
	if st.EphemeralOwner != c.SessionID() {
		t.Fatalf("the node is owned by 0x%x, not ours 0x%x", st.EphemeralOwner, c.SessionID())
	}
	if inst, err := discovery.Decode(data); err != nil || *inst.Port != 2 {
		t.Fatalf("registered %s, %v", data, err)
	}
	// A sequential instance never meets another's node: TakeOver is
	// no error there.
	seq := instance("orders", "s-", 3)
	seq.ServiceType = discovery.DynamicSequential
	if err := d.Register(ctx, seq); err != nil {
		t.Fatalf("a DynamicSequential instance with TakeOver: %v", err)
	}
}
