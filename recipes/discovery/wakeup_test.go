package discovery_test

import (
	"testing"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/discovery"
	"github.com/gocurator/curator/zktest"
)

// Pitfall 26 in discovery: a reconnection is no evidence of anything. The
// changes made while a cache's connection was cut (an instance gone, one
// new, one updated, one deleted and registered again: version 0 both
// times) are read again after it; the cache and its provider then hold
// exactly what the server holds, field for field.
func TestCacheReadsAgainAfterACut(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns)
	d := open(t, c, "/services")
	s := d.Cache("orders")
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	p := discovery.NewProvider(s)
	regC := testkit.Connect(t, zkAddr, ns)
	reg := open(t, regC, "/services")
	for _, id := range []string{"a", "b", "r"} {
		if err := reg.Register(ctx, instance("orders", id, 1)); err != nil {
			t.Fatal(err)
		}
	}
	awaitIDs(t, s, "a", "b", "r")

	proxy.Cut()
	testkit.WaitState(t, c, connstate.Suspended)
	if err := reg.Unregister(ctx, instance("orders", "a", 1)); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(ctx, instance("orders", "c", 1)); err != nil {
		t.Fatal(err)
	}
	if err := reg.Update(ctx, instance("orders", "b", 2)); err != nil {
		t.Fatal(err)
	}
	if err := reg.Unregister(ctx, instance("orders", "r", 1)); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(ctx, instance("orders", "r", 3)); err != nil {
		t.Fatal(err)
	}
	proxy.Restore()
	testkit.WaitState(t, c, connstate.Reconnected)

	server, err := reg.Instances(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	same := func(l []discovery.Instance) bool {
		if len(l) != len(server) {
			return false
		}
		for k := range l {
			x, _ := l[k].MarshalJSON()
			y, _ := server[k].MarshalJSON()
			if string(x) != string(y) {
				return false
			}
		}
		return true
	}
	testkit.Eventually(t, "the cache holds what the server holds", func() bool { return same(s.Instances()) })
	testkit.Eventually(t, "the provider offers what the server holds", func() bool { return same(p.Instances()) })
}
