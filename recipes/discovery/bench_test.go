package discovery_test

import (
	"fmt"
	"testing"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/discovery"
)

// Registration churn: one Register and one Unregister of a Dynamic
// instance per iteration (b.N instances registered and unregistered).
func BenchmarkRegistrationChurn(b *testing.B) {
	ctx := testkit.Ctx(b)
	c := testkit.Connect(b, zkAddr, testkit.Unique(b))
	d := discovery.New(c, "/services")
	defer d.Close(ctx)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		inst := discovery.Instance{Name: "svc", ID: fmt.Sprint("i", i), Address: "10.0.0.1", Port: discovery.Int(8080)}
		if err := d.Register(ctx, inst); err != nil {
			b.Fatal(err)
		}
		if err := d.Unregister(ctx, inst); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "instances/s")
}

// A pick from a started provider's cache.
func BenchmarkProviderPickFromCache(b *testing.B) {
	ctx := testkit.Ctx(b)
	c := testkit.Connect(b, zkAddr, testkit.Unique(b))
	d := discovery.New(c, "/services")
	defer d.Close(ctx)
	for i := range 8 {
		if err := d.Register(ctx, discovery.Instance{Name: "svc", ID: fmt.Sprint("i", i)}); err != nil {
			b.Fatal(err)
		}
	}
	p := d.Provider("svc")
	if err := p.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := p.Instance(); err != nil {
			b.Fatal(err)
		}
	}
}
