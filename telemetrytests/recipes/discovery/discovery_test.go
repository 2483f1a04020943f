package discovery_test

import (
	"errors"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/discovery"
	"github.com/gocurator/curator/telemetrytests/internal/oteltest"
)

// Malformed JSON from another registrant is skipped and reported (log and
// metric); the valid instances are still found, by the queries, the
// cache and the provider. recipes/discovery's test of the same name runs
// the scenario without reading the metric.
func TestMalformedInstanceIsSkippedAndReported(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	tel := oteltest.New(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t), framework.WithMeterProvider(tel.Meters))
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
	if n := tel.Sum(t, "curator.discovery.malformed"); n < 6 {
		t.Fatalf("curator.discovery.malformed = %d, want at least 6", n)
	}
}
