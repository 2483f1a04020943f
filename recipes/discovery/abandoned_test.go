package discovery_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/discovery"
	"github.com/gocurator/curator/zktest"
)

// Pitfall 25 in discovery: a write the library stops waiting for when ctx
// ends can still reach the server. Registrations, updates and
// unregistrations of every service type, on contexts that end at varied
// points while requests are in flight (a proxy delays every packet):
// whatever each call returned, once Register has failed or Unregister or
// Close has returned, the instance goes and stays gone; only the Static
// and Permanent instances registered and never unregistered stay (Close
// keeps them, CURATOR-94). The server is checked again after a marker
// write of the same session and a sync, so that a create an abandoned
// call sent late would be seen.
func TestAbandonedWritesLeaveNoInstance(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	proxy.SetDelay(2 * time.Millisecond)
	c := testkit.Connect(t, proxy.Addr(), ns)
	watcher := testkit.Connect(t, zkAddr, ns)
	d := discovery.New(c, "/services")
	types := []discovery.ServiceType{discovery.Dynamic, discovery.DynamicSequential, discovery.Static, discovery.Permanent}
	short := func(k int) context.Context {
		cctx, cancel := context.WithTimeout(ctx, time.Duration(k%9)*2500*time.Microsecond)
		t.Cleanup(cancel)
		return cctx
	}
	var kept []string
	failed, unregistered := 0, 0
	for k := range 48 {
		inst := instance("svc", fmt.Sprint("i", k), k)
		inst.ServiceType = types[k%len(types)]
		if err := d.Register(short(k), inst); err != nil {
			failed++
			continue
		}
		if k%3 == 0 {
			// Left for Close, which keeps the Static and Permanent ones.
			if inst.ServiceType == discovery.Static || inst.ServiceType == discovery.Permanent {
				kept = append(kept, inst.ID)
			}
			continue
		}
		inst.Port = discovery.Int(k + 1000)
		_ = d.Update(short(k+4), inst)
		_ = d.Unregister(short(k+2), inst)
		unregistered++
	}
	// A short ctx leaves Close's deletes to the background.
	_ = d.Close(short(3))
	t.Logf("%d registrations failed, %d unregistered, %d kept", failed, unregistered, len(kept))
	slices.Sort(kept)
	want := joinIDs(kept)
	left := func() string {
		ids := testkit.Children(t, watcher, "/services/svc")
		slices.Sort(ids)
		return joinIDs(ids)
	}
	for end := time.Now().Add(testkit.Deadline); left() != want; {
		if time.Now().After(end) {
			t.Fatalf("instances %s are left, want %s", left(), want)
		}
		// Polls the server, as testkit.Eventually does: the deletes
		// that went on in the background have no event to wait on.
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := c.Create(ctx, "/marker", nil, framework.WithMode(framework.Ephemeral)); err != nil {
		t.Fatal(err)
	}
	if err := watcher.Sync(ctx, "/services"); err != nil {
		t.Fatal(err)
	}
	if got := left(); got != want {
		t.Fatalf("after the marker: instances %s, want %s", got, want)
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, c)
}

// Pitfall 25 through a session loss: right after the reconnection the
// instance is being registered again in the new session, and Unregister
// or Close is called then, on a ctx that ends at varied points while the
// create is in flight. The instance must go and stay gone (CURATOR-164's
// ghost: re-created after Close returned, owned by the live session).
func TestUnregisterDuringReRegistrationLeavesNoGhost(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns, framework.WithSessionTimeout(2*time.Second))
	watcher := testkit.Connect(t, zkAddr, ns)
	for k := range 4 {
		proxy.SetDelay(0)
		d := discovery.New(c, "/services")
		inst := instance("orders", fmt.Sprint("o", k), k)
		if k%2 == 1 {
			inst.ServiceType = discovery.DynamicSequential
		}
		if err := d.Register(ctx, inst); err != nil {
			t.Fatal(err)
		}
		proxy.BlackHole()
		testkit.WaitState(t, c, connstate.Lost)
		proxy.SetDelay(3 * time.Millisecond)
		proxy.Restore()
		testkit.WaitState(t, c, connstate.Reconnected)
		short, cancel := context.WithTimeout(ctx, time.Duration(k)*2*time.Millisecond)
		if k%2 == 0 {
			_ = d.Unregister(short, inst)
		} else {
			_ = d.Close(short)
		}
		cancel()
		_ = d.Close(ctx)
		testkit.Eventually(t, "the instance is gone", func() bool { return len(testkit.Children(t, watcher, "/services/orders")) == 0 })
		if _, err := c.Create(ctx, "/marker", nil, framework.WithMode(framework.Ephemeral)); err != nil {
			t.Fatal(err)
		}
		if err := watcher.Sync(ctx, "/services"); err != nil {
			t.Fatal(err)
		}
		if ids := testkit.Children(t, watcher, "/services/orders"); len(ids) != 0 {
			t.Fatalf("round %d: ghost instance %v registered again after %s returned", k, ids, map[bool]string{true: "Unregister", false: "Close"}[k%2 == 0])
		}
		if err := c.Delete(ctx, "/marker"); err != nil {
			t.Fatal(err)
		}
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, c)
}

// The clean-up of an abandoned write must not undo the next one: a
// Register cut short by its ctx, retried at once with the same instance
// (same data, as a caller retrying after a timeout does), leaves the
// retried registration in place, for every service type; likewise a
// Register right after an Unregister that was cut short.
func TestRetryAfterAbandonedWriteStays(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	proxy.SetDelay(2 * time.Millisecond)
	c := testkit.Connect(t, proxy.Addr(), ns)
	watcher := testkit.Connect(t, zkAddr, ns)
	d := open(t, c, "/services")
	types := []discovery.ServiceType{discovery.Dynamic, discovery.Static, discovery.Permanent}
	var want []string
	for k := range 24 {
		inst := instance("svc", fmt.Sprint("r", k), k)
		inst.ServiceType = types[k%len(types)]
		short, cancel := context.WithTimeout(ctx, time.Duration(k%8)*time.Millisecond)
		if k%2 == 0 {
			_ = d.Register(short, inst)
		} else {
			if err := d.Register(ctx, inst); err != nil {
				t.Fatal(err)
			}
			_ = d.Unregister(short, inst)
		}
		cancel()
		if err := d.Register(ctx, inst); err != nil {
			t.Fatalf("retried Register of %s: %v", inst.ID, err)
		}
		want = append(want, inst.ID)
	}
	slices.Sort(want)
	if _, err := c.Create(ctx, "/marker", nil, framework.WithMode(framework.Ephemeral)); err != nil {
		t.Fatal(err)
	}
	// A retried Register returns only once the clean-up of the write it
	// retries is done, so the server must hold every retried instance
	// now, and still after more round trips of the writing session.
	for range 3 {
		if err := watcher.Sync(ctx, "/services"); err != nil {
			t.Fatal(err)
		}
		ids := testkit.Children(t, watcher, "/services/svc")
		slices.Sort(ids)
		if joinIDs(ids) != joinIDs(want) {
			t.Fatalf("instances %v, want the retried ones %v", ids, want)
		}
		if err := c.Sync(ctx, "/services"); err != nil {
			t.Fatal(err)
		}
	}
}
