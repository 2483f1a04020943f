package discovery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/discovery"
	"github.com/gocurator/curator/zktest"
)

// Curator's layout: <base>/<name>/<id>, EPHEMERAL for DYNAMIC, data the
// instance's JSON, parents containers; the queries read it back.
func TestRegisterQueryUpdateUnregister(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	d := open(t, c, "/services")
	inst := instance("orders", "o-1", 8080)
	if err := d.Register(ctx, inst); err != nil {
		t.Fatal(err)
	}
	data, st := get(t, c, "/services/orders/o-1")
	if st.EphemeralOwner != c.SessionID() {
		t.Fatalf("ephemeralOwner 0x%x, want our session 0x%x", st.EphemeralOwner, c.SessionID())
	}
	inst.ServiceType = discovery.Dynamic
	want, _ := inst.MarshalJSON()
	if !bytes.Equal(data, want) {
		t.Fatalf("node data\n %s\nwant\n %s", data, want)
	}
	if strings.Contains(string(data), `"enabled"`) {
		t.Fatal("Curator's default serializer leaves enabled out")
	}
	if st := stat(t, c, "/services/orders"); st.EphemeralOwner != 0 {
		t.Fatal("service node is ephemeral")
	}
	if err := d.Register(ctx, instance("billing", "b-1", 9090)); err != nil {
		t.Fatal(err)
	}
	names, err := d.Names(ctx)
	if err != nil || strings.Join(names, ",") != "billing,orders" {
		t.Fatalf("Names = %v, %v", names, err)
	}
	got, err := d.Instances(ctx, "orders")
	if err != nil || len(got) != 1 || got[0].ID != "o-1" || *got[0].Port != 8080 {
		t.Fatalf("Instances = %+v, %v", got, err)
	}
	inst.Port = discovery.Int(8081)
	if err := d.Update(ctx, inst); err != nil {
		t.Fatal(err)
	}
	one, err := d.Instance(ctx, "orders", "o-1")
	if err != nil || *one.Port != 8081 {
		t.Fatalf("Instance after Update = %+v, %v", one, err)
	}
	if _, st2 := get(t, c, "/services/orders/o-1"); st2.Czxid != st.Czxid {
		t.Fatal("Update re-created the node; it must set its data")
	}
	if err := d.Unregister(ctx, inst); err != nil {
		t.Fatal(err)
	}
	if stat(t, c, "/services/orders/o-1") != nil {
		t.Fatal("instance node left after Unregister")
	}
	if _, err := d.Instance(ctx, "orders", "o-1"); !errors.Is(err, discovery.ErrNotFound) {
		t.Fatalf("Instance after Unregister: %v, want ErrNotFound", err)
	}
	if err := d.Update(ctx, inst); !errors.Is(err, discovery.ErrNotRegistered) {
		t.Fatalf("Update after Unregister: %v, want ErrNotRegistered", err)
	}
	if err := d.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if stat(t, c, "/services/billing/b-1") != nil {
		t.Fatal("Close left a DYNAMIC instance")
	}
	if err := d.Register(ctx, inst); !errors.Is(err, discovery.ErrClosed) {
		t.Fatalf("Register after Close: %v", err)
	}
}

// WithEnabledField writes Curator's non-compatible mode.
func TestEnabledField(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	d := open(t, c, "/s", discovery.WithEnabledField())
	if err := d.Register(ctx, instance("svc", "a", 1)); err != nil {
		t.Fatal(err)
	}
	data, _ := get(t, c, "/s/svc/a")
	if !bytes.HasSuffix(data, []byte(`,"enabled":true}`)) {
		t.Fatalf("data %s, want enabled last", data)
	}
}

// Curator deletes and re-creates every instance on each reconnection, so
// every watcher sees the service go and come back. A reconnection on the
// same session changes nothing here: same node, no event.
func TestReconnectDoesNotFlap(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns)
	d := open(t, c, "/services")
	if err := d.Register(ctx, instance("orders", "o-1", 8080)); err != nil {
		t.Fatal(err)
	}
	_, before := get(t, c, "/services/orders/o-1")

	watcher := open(t, testkit.Connect(t, zkAddr, ns), "/services")
	sc := watcher.Cache("orders")
	if err := sc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	awaitIDs(t, sc, "o-1")
	seen := listen(t, sc)

	for range 3 {
		proxy.Cut()
		testkit.WaitState(t, c, connstate.Suspended)
		proxy.Restore()
		testkit.WaitState(t, c, connstate.Reconnected)
	}
	if err := c.Sync(ctx, "/services"); err != nil {
		t.Fatal(err)
	}
	if _, after := get(t, c, "/services/orders/o-1"); after.Czxid != before.Czxid {
		t.Fatalf("the instance node was re-created on reconnect (czxid %d -> %d)", before.Czxid, after.Czxid)
	}
	// The cache is current with the server; its listener heard nothing.
	ctrl := open(t, c, "/services")
	if err := ctrl.Register(ctx, instance("orders", "marker", 1)); err != nil {
		t.Fatal(err)
	}
	awaitIDs(t, sc, "marker", "o-1")
	testkit.Eventually(t, "marker notified", func() bool { return seen.count() >= 1 })
	if n := seen.count(); n != 1 {
		t.Fatalf("%d cache changes, want 1 (the marker): the reconnections flapped the instance", n)
	}
}

// After the session is lost the instance comes back in the new session,
// owned by it, with the data of the latest Update, even one made while
// the session was being lost (CURATOR-146, CURATOR-181).
func TestReRegisteredAfterExpiryWithLatestUpdate(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), testkit.Unique(t), framework.WithSessionTimeout(2*time.Second))
	d := open(t, c, "/services")
	inst := instance("orders", "o-1", 1)
	if err := d.Register(ctx, inst); err != nil {
		t.Fatal(err)
	}
	old := c.SessionID()
	proxy.BlackHole()
	testkit.WaitState(t, c, connstate.Lost)
	inst.Port = discovery.Int(2)
	// The node cannot be written now: the data waits for the new node.
	_ = d.Update(withTimeout(t, 200*time.Millisecond), inst)
	proxy.Restore()
	testkit.WaitState(t, c, connstate.Reconnected)
	testkit.Eventually(t, "instance registered in the new session", func() bool {
		st, err := c.Exists(ctx, "/services/orders/o-1")
		return err == nil && st != nil && st.EphemeralOwner == c.SessionID() && c.SessionID() != old
	})
	got, err := d.Instance(ctx, "orders", "o-1")
	if err != nil || got.Port == nil || *got.Port != 2 {
		t.Fatalf("re-registered instance %+v, %v; want the updated port 2", got, err)
	}
}

// An instance with our id registered by another live session is never
// deleted nor overwritten (Curator deletes it); Unregister and Close of
// ours leave it.
func TestSameIDOfAnotherSessionIsNeverDeleted(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	owner := testkit.Connect(t, zkAddr, ns)
	theirs := open(t, owner, "/services")
	if err := theirs.Register(ctx, instance("orders", "dup", 1)); err != nil {
		t.Fatal(err)
	}
	data, st := get(t, owner, "/services/orders/dup")

	c := testkit.Connect(t, zkAddr, ns)
	ours := open(t, c, "/services", discovery.FailIfOwned())
	err := ours.Register(ctx, instance("orders", "dup", 2))
	if !errors.Is(err, discovery.ErrOwnedByOtherSession) {
		t.Fatalf("Register of a taken id: %v, want ErrOwnedByOtherSession", err)
	}
	if err := ours.Unregister(ctx, instance("orders", "dup", 2)); err != nil {
		t.Fatal(err)
	}
	if err := ours.Close(ctx); err != nil {
		t.Fatal(err)
	}
	after, st2 := get(t, c, "/services/orders/dup")
	if st2.Czxid != st.Czxid || !bytes.Equal(after, data) {
		t.Fatal("the other session's instance was replaced")
	}

	// By default (WaitForOwner) ours is made once theirs has gone, never
	// before.
	waiting := open(t, testkit.Connect(t, zkAddr, ns), "/services")
	done := make(chan error, 1)
	go func() { done <- waiting.Register(ctx, instance("orders", "dup", 3)) }()
	if err := theirs.Unregister(ctx, instance("orders", "dup", 1)); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Register with WaitForOwner: %v", err)
	}
	if got, _ := ours.Instance(context.Background(), "orders", "dup"); got.Port != nil {
		t.Fatal("query after Close should fail")
	}
	inst, err := theirs.Instance(ctx, "orders", "dup")
	if err != nil || *inst.Port != 3 {
		t.Fatalf("instance after the owner left: %+v, %v", inst, err)
	}
}

// CURATOR-164: an Unregister while the connection is down must not leave
// the instance behind, nor let a re-registration bring it back.
func TestUnregisterRacingReconnectLeavesNoPhantom(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns, framework.WithSessionTimeout(2*time.Second))
	d := open(t, c, "/services")
	inst := instance("orders", "o-1", 1)
	if err := d.Register(ctx, inst); err != nil {
		t.Fatal(err)
	}
	watcher := testkit.Connect(t, zkAddr, ns)

	// Same session: the delete goes on in the background and lands.
	proxy.Cut()
	testkit.WaitState(t, c, connstate.Suspended)
	_ = d.Unregister(withTimeout(t, 100*time.Millisecond), inst)
	proxy.Restore()
	testkit.Eventually(t, "instance deleted", func() bool { return stat(t, watcher, "/services/orders/o-1") == nil })

	// Session lost: Unregister before the reconnection; the instance
	// must not be registered again in the new session.
	if err := d.Register(ctx, inst); err != nil {
		t.Fatal(err)
	}
	proxy.BlackHole()
	testkit.WaitState(t, c, connstate.Lost)
	_ = d.Unregister(withTimeout(t, 100*time.Millisecond), inst)
	proxy.Restore()
	testkit.WaitState(t, c, connstate.Reconnected)
	testkit.Eventually(t, "old session's instance gone", func() bool { return stat(t, watcher, "/services/orders/o-1") == nil })
	// A write after the reconnection, then a sync: a re-registration would
	// have been made by now, since the Node's goroutines have ended.
	if err := open(t, c, "/services").Register(ctx, instance("orders", "marker", 1)); err != nil {
		t.Fatal(err)
	}
	if err := watcher.Sync(ctx, "/services"); err != nil {
		t.Fatal(err)
	}
	if st := stat(t, watcher, "/services/orders/o-1"); st != nil {
		t.Fatalf("phantom instance re-registered after Unregister (owner 0x%x)", st.EphemeralOwner)
	}
}

// CURATOR-320: connection flapping re-registers nothing.
func TestConnectionFlappingCausesNoReRegistration(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), testkit.Unique(t))
	d := open(t, c, "/services")
	for _, id := range []string{"a", "b", "c"} {
		if err := d.Register(ctx, instance("svc", id, 1)); err != nil {
			t.Fatal(err)
		}
	}
	_, st := get(t, c, "/services/svc")
	for range 5 {
		proxy.Cut()
		proxy.Restore()
	}
	testkit.WaitState(t, c, connstate.Reconnected)
	if err := c.Sync(ctx, "/services"); err != nil {
		t.Fatal(err)
	}
	// Every create or delete of a child bumps the parent's cversion.
	if _, after := get(t, c, "/services/svc"); after.Cversion != st.Cversion {
		t.Fatalf("children of the service changed %d times while the connection flapped", after.Cversion-st.Cversion)
	}
}

// CURATOR-94: Close unregisters what dies with the session anyway and
// keeps STATIC and PERMANENT instances.
func TestCloseKeepsPermanentAndStaticInstances(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	d := discovery.New(c, "/services")
	for _, tt := range []struct {
		id string
		ty discovery.ServiceType
	}{{"static", discovery.Static}, {"permanent", discovery.Permanent}, {"dynamic", discovery.Dynamic}} {
		inst := instance("svc", tt.id, 1)
		inst.ServiceType = tt.ty
		if err := d.Register(ctx, inst); err != nil {
			t.Fatal(err)
		}
	}
	if st := stat(t, c, "/services/svc/static"); st.EphemeralOwner != 0 {
		t.Fatal("a STATIC instance must be PERSISTENT")
	}
	if err := d.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]bool{"static": true, "permanent": true, "dynamic": false} {
		if got := stat(t, c, "/services/svc/"+id) != nil; got != want {
			t.Errorf("%s: exists after Close = %v, want %v", id, got, want)
		}
	}
	// A later process unregisters them.
	later := open(t, c, "/services")
	for _, id := range []string{"static", "permanent"} {
		inst := instance("svc", id, 1)
		inst.ServiceType = discovery.Static
		if err := later.Unregister(ctx, inst); err != nil {
			t.Fatal(err)
		}
		if stat(t, c, "/services/svc/"+id) != nil {
			t.Errorf("%s left after Unregister", id)
		}
	}
}

// Curator's queryForInstance looks a DYNAMIC_SEQUENTIAL instance up by its
// node name only; here it is found by its id.
func TestDynamicSequentialFoundByID(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	d := open(t, c, "/services")
	inst := instance("jobs", "worker", 1)
	inst.ServiceType = discovery.DynamicSequential
	if err := d.Register(ctx, inst); err != nil {
		t.Fatal(err)
	}
	kids := testkit.Children(t, c, "/services/jobs")
	if len(kids) != 1 || !strings.HasPrefix(kids[0], "worker") || len(kids[0]) != len("worker")+10 {
		t.Fatalf("children %v, want worker<10 digits>", kids)
	}
	got, err := d.Instance(ctx, "jobs", "worker")
	if err != nil || got.ID != "worker" || got.ServiceType != discovery.DynamicSequential {
		t.Fatalf("Instance by id = %+v, %v", got, err)
	}
	inst.Port = discovery.Int(2)
	if err := d.Update(ctx, inst); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.Instance(ctx, "jobs", "worker"); *got.Port != 2 {
		t.Fatalf("Update of a sequential instance: port %d", *got.Port)
	}
	if err := d.Unregister(ctx, inst); err != nil {
		t.Fatal(err)
	}
	if kids := testkit.Children(t, c, "/services/jobs"); len(kids) != 0 {
		t.Fatalf("left %v", kids)
	}
}

// CURATOR-705: a cache started before the service has any instance (or
// node) fills as instances register; CURATOR-163: an operator deleting the
// service's node and registering again is followed.
func TestCacheFollowsFirstRegistrationAndServiceRecreation(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	d := open(t, c, "/services")
	sc := d.Cache("orders")
	if err := sc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(sc.Instances()); n != 0 {
		t.Fatalf("%d instances before any registration", n)
	}
	seen := listen(t, sc)
	reg := open(t, testkit.Connect(t, zkAddr, ns), "/services")
	for _, id := range []string{"a", "b"} {
		if err := reg.Register(ctx, instance("orders", id, 1)); err != nil {
			t.Fatal(err)
		}
	}
	awaitIDs(t, sc, "a", "b")
	testkit.Eventually(t, "listener told", func() bool { return seen.count() > 0 })

	// The operator removes the whole service, then it registers again.
	if err := reg.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "/services/orders", framework.DeletingChildren(), framework.Quietly()); err != nil {
		t.Fatal(err)
	}
	awaitIDs(t, sc)
	again := open(t, testkit.Connect(t, zkAddr, ns), "/services")
	if err := again.Register(ctx, instance("orders", "c", 1)); err != nil {
		t.Fatal(err)
	}
	awaitIDs(t, sc, "c")
	if err := sc.Close(); err != nil {
		t.Fatal(err)
	}
}

// Malformed JSON from another registrant is skipped and reported (log and
// metric); the valid instances are still found, by the queries, the
// cache and the provider. The metric (curator.discovery.malformed) is
// read back through OpenTelemetry's SDK by the same scenario in the
// telemetrytests module (telemetrytests/recipes/discovery), so that the
// library's go.mod does not require the SDK.
func TestMalformedInstanceIsSkippedAndReported(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	d := open(t, c, "/services")
	if err := d.Register(ctx, instance("orders", "good", 1)); err != nil {
		t.Fatal(err)
	}
	for id, data := range map[string]string{"junk": "not json", "badport": `{"name":"orders","id":"badport","port":"0x50"}`, "empty": ""} {
		if _, err := c.Create(ctx, "/services/orders/"+id, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := d.Instances(ctx, "orders")
	if err != nil || len(got) != 1 || got[0].ID != "good" {
		t.Fatalf("Instances = %+v, %v", got, err)
	}
	if _, err := d.Instance(ctx, "orders", "junk"); !errors.Is(err, discovery.ErrMalformed) {
		t.Fatalf("Instance of a malformed node: %v", err)
	}
	p := d.Provider("orders")
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		inst, err := p.Instance()
		if err != nil || inst.ID != "good" {
			t.Fatalf("pick = %+v, %v", inst, err)
		}
	}
}

func TestRegisterRefusesBadInstances(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	d := open(t, c, "/services")
	big := instance("svc", "big", 1)
	big.Payload = json.RawMessage(`"` + strings.Repeat("x", 2<<20) + `"`)
	for _, tt := range []struct {
		name string
		inst discovery.Instance
		want error
	}{
		{"no name", discovery.Instance{ID: "a"}, discovery.ErrInvalidInstance},
		{"dot id", discovery.Instance{Name: "a", ID: ".."}, discovery.ErrInvalidInstance},
		{"slash in id", discovery.Instance{Name: "a", ID: "x/y"}, discovery.ErrInvalidInstance},
		{"unknown type", discovery.Instance{Name: "a", ID: "b", ServiceType: "EPHEMERAL"}, discovery.ErrInvalidInstance},
		{"payload not JSON", discovery.Instance{Name: "a", ID: "b", Payload: json.RawMessage("{")}, discovery.ErrInvalidInstance},
		{"bare array payload", discovery.Instance{Name: "a", ID: "b", Payload: json.RawMessage("[1,2]")}, discovery.ErrInvalidInstance},
		{"oversized", big, discovery.ErrTooLarge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := d.Register(ctx, tt.inst); !errors.Is(err, tt.want) {
				t.Fatalf("Register = %v, want %v", err, tt.want)
			}
		})
	}
	if st := stat(t, c, "/services"); st != nil {
		t.Fatal("a refused instance wrote something")
	}
	var nilD *discovery.Discovery
	if err := nilD.Register(ctx, instance("a", "b", 1)); !errors.Is(err, discovery.ErrNilHandle) {
		t.Fatalf("nil Discovery: %v", err)
	}
	if err := discovery.New(nil, "/s").Register(ctx, instance("a", "b", 1)); !errors.Is(err, discovery.ErrNilClient) {
		t.Fatalf("nil client: %v", err)
	}
	if err := discovery.New(c, "s").Register(ctx, instance("a", "b", 1)); !errors.Is(err, discovery.ErrInvalidPath) {
		t.Fatalf("relative base path: %v", err)
	}
}

// A provider made by the Discovery follows registrations and leaves no
// watch, goroutine or node behind after Close.
func TestProviderFollowsRegistrationsAndCloseLeavesNothing(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	d := discovery.New(c, "/services")
	p := d.Provider("orders")
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Instance(); !errors.Is(err, discovery.ErrNoInstances) {
		t.Fatalf("pick with no instance: %v", err)
	}
	reg := open(t, testkit.Connect(t, zkAddr, ns), "/services")
	for _, id := range []string{"a", "b"} {
		if err := reg.Register(ctx, instance("orders", id, 1)); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Eventually(t, "provider offers both", func() bool { return len(p.Instances()) == 2 })
	first, _ := p.Instance()
	second, _ := p.Instance()
	if first.ID == second.ID {
		t.Fatalf("round robin picked %s twice", first.ID)
	}
	if err := d.Close(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, c)
}
