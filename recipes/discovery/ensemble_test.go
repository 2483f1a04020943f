package discovery_test

import (
	"testing"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/discovery"
	"github.com/gocurator/curator/zktest"
)

// On a 3-node ensemble whose leader is killed, the clients move to the
// servers left on the same sessions: the instance stays registered (the
// same node: no re-registration, no flap), and the caches, one per
// client, converge on every change made around the election.
func TestLeaderKilledInstanceStaysAndCachesConverge(t *testing.T) {
	t.Parallel()
	ens := zktest.StartEnsemble(t, 3)
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	reg := testkit.Connect(t, ens.ConnectString(), ns)
	d := open(t, reg, "/services")
	if err := d.Register(ctx, instance("orders", "o-1", 8080)); err != nil {
		t.Fatal(err)
	}
	_, before := get(t, reg, "/services/orders/o-1")

	var caches []*discovery.ServiceCache
	for range 2 {
		sc := open(t, testkit.Connect(t, ens.ConnectString(), ns), "/services").Cache("orders")
		if err := sc.Start(ctx); err != nil {
			t.Fatal(err)
		}
		awaitIDs(t, sc, "o-1")
		caches = append(caches, sc)
	}
	other := open(t, testkit.Connect(t, ens.ConnectString(), ns), "/services")

	leader, err := ens.Leader()
	if err != nil {
		t.Fatal(err)
	}
	if err := leader.Kill(); err != nil {
		t.Fatal(err)
	}
	// Changes while the ensemble elects: each call waits for a quorum.
	if err := other.Register(ctx, instance("orders", "o-2", 8080)); err != nil {
		t.Fatal(err)
	}
	if _, err := ens.AwaitLeader(ctx, leader); err != nil {
		t.Fatal(err)
	}
	if err := other.Register(ctx, instance("orders", "o-3", 8080)); err != nil {
		t.Fatal(err)
	}
	if err := other.Unregister(ctx, instance("orders", "o-2", 8080)); err != nil {
		t.Fatal(err)
	}
	for _, sc := range caches {
		awaitIDs(t, sc, "o-1", "o-3")
	}
	if err := reg.Sync(ctx, "/services/orders"); err != nil {
		t.Fatal(err)
	}
	_, after := get(t, reg, "/services/orders/o-1")
	if after.Czxid != before.Czxid || after.EphemeralOwner != reg.SessionID() {
		t.Fatalf("the instance was re-created across the election (czxid %d -> %d, owner 0x%x, session 0x%x)",
			before.Czxid, after.Czxid, after.EphemeralOwner, reg.SessionID())
	}

	// The killed server comes back; the caches still follow.
	if err := leader.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := d.Unregister(ctx, instance("orders", "o-1", 8080)); err != nil {
		t.Fatal(err)
	}
	for _, sc := range caches {
		awaitIDs(t, sc, "o-3")
	}
}
