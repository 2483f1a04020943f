package discovery_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/discovery"
)

// A second Start of a running ServiceCache or Provider fails, and the
// failure must not un-track the first: Discovery.Close still closes the
// running cache, so no server watch (and no goroutine, goleak) is left.
func TestFailedSecondStartKeepsTheFirstTracked(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	d := discovery.New(c, "/services")
	s := d.Cache("orders")
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); !errors.Is(err, discovery.ErrAlreadyStarted) {
		t.Fatalf("second Start of a cache: %v, want ErrAlreadyStarted", err)
	}
	p := d.Provider("billing")
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); !errors.Is(err, discovery.ErrAlreadyStarted) {
		t.Fatalf("second Start of a provider: %v, want ErrAlreadyStarted", err)
	}
	testkit.AwaitWatchCount(t, zkAddr, 2, c)
	if err := d.Close(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, c)
}

// After Discovery.Close, its Provider refuses to pick (ErrClosed): the
// instance Close has just unregistered must not be routed to.
func TestProviderAfterDiscoveryCloseReturnsErrClosed(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	d := discovery.New(c, "/services")
	if err := d.Register(ctx, instance("orders", "a", 1)); err != nil {
		t.Fatal(err)
	}
	p := d.Provider("orders")
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if inst, err := p.Instance(); err != nil || inst.ID != "a" {
		t.Fatalf("pick: %v %v", inst.ID, err)
	}
	if err := d.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if st := stat(t, c, "/services/orders/a"); st != nil {
		t.Fatal("Close left the instance registered")
	}
	if inst, err := p.Instance(); !errors.Is(err, discovery.ErrClosed) {
		t.Fatalf("pick after the Discovery's Close: %q, %v, want ErrClosed", inst.ID, err)
	}
	if l := p.Instances(); len(l) != 0 {
		t.Fatalf("Instances after the Discovery's Close: %v", idsOf(l))
	}
}

// NewProvider(nil) is a provider whose picks fail with ErrNilSource; it
// must not panic.
func TestNewProviderOfNilSource(t *testing.T) {
	t.Parallel()
	p := discovery.NewProvider(nil)
	if _, err := p.Instance(); !errors.Is(err, discovery.ErrNilSource) {
		t.Fatalf("pick from a nil source: %v, want ErrNilSource", err)
	}
	if l := p.Instances(); l != nil {
		t.Fatalf("Instances of a nil source: %v", l)
	}
	var nilCache *discovery.ServiceCache
	if _, err := discovery.NewProvider(nilCache).Instance(); !errors.Is(err, discovery.ErrNilSource) {
		t.Fatalf("pick from a nil *ServiceCache: %v, want ErrNilSource", err)
	}
	_ = context.Background
}
