package discovery_test

import (
	"strconv"
	"testing"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/discovery"
)

// received returns how many requests the server has read from session
// sid (testkit.Received).
func received(t *testing.T, sid int64) int { return testkit.Received(t, zkAddr, sid) }

// Registration churn, counted in requests by the server (issue 35): a
// Dynamic instance's Register sends 2 in one round trip, its create and,
// beside it, a read that sets a one-shot data watch on the node (the
// server answers a session's requests in order, so the read finds the
// node; the rare read that goes first is sent again, which the least of
// the rounds leaves out); its Unregister sends 1, the delete, checked by
// version and not preceded by a read of the owner (recipes/node's
// removeKnown), which fires that watch, so that nothing is left to
// remove. A pair, the churn of curatorbench -discovery, is 3 in 2 round
// trips. The first version sent 5 in 4: an addWatch before the create,
// then an exists (the owner check), the delete and a removeWatches.
// Curator sends 2 a pair and watches nothing. The counts are the least of
// several rounds (a keepalive ping may fall in one), so timing cannot make
// the test pass or fail; a request added back fails it.
func TestRegisterAndUnregisterRequestCounts(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	d := open(t, c, "/services")
	// The parents exist: churn registers beside other instances.
	if err := d.Register(ctx, instance("orders", "keep", 8000)); err != nil {
		t.Fatal(err)
	}
	const rounds = 8
	reg, unreg, pair := 1<<30, 1<<30, 1<<30
	for i := range rounds {
		inst := instance("orders", "churn-"+strconv.Itoa(i), 8080)
		sid := c.SessionID()
		n0 := received(t, sid)
		if err := d.Register(ctx, inst); err != nil {
			t.Fatal(err)
		}
		n1 := received(t, sid)
		if err := d.Unregister(ctx, inst); err != nil {
			t.Fatal(err)
		}
		n2 := received(t, sid)
		if err := d.Register(ctx, inst); err != nil {
			t.Fatal(err)
		}
		if err := d.Unregister(ctx, inst); err != nil {
			t.Fatal(err)
		}
		n3 := received(t, sid)
		reg, unreg, pair = min(reg, n1-n0), min(unreg, n2-n1), min(pair, n3-n2)
		if st := stat(t, c, "/services/orders/churn-"+strconv.Itoa(i)); st != nil {
			t.Fatalf("instance left after Unregister: %+v", st)
		}
	}
	t.Logf("requests: Register %d, Unregister %d, Register and Unregister at once %d", reg, unreg, pair)
	if reg != 2 || unreg != 1 || pair != 3 {
		t.Fatalf("Register sent %d requests (want 2: create, watch), Unregister %d (want 1: delete), both at once %d (want 3)",
			reg, unreg, pair)
	}
	if err := d.Unregister(ctx, discovery.Instance{Name: "orders", ID: "keep"}); err != nil {
		t.Fatal(err)
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, c)
}
