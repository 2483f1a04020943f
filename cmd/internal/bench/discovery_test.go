package bench

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/testkit"
)

func TestMedianDiscovery(t *testing.T) {
	rows := []DiscoveryResult{
		{Impl: ImplOurs, RTTMs: 2, PickNs: 300, PickAllocs: 3, ChurnPerSec: 10},
		{Impl: ImplCurator, RTTMs: 2, PickNs: 900, PickAllocs: -1, ChurnPerSec: 5, ChurnReads: -1, ChurnWrites: -1},
		{Impl: ImplOurs, RTTMs: 2, PickNs: 100, PickAllocs: 1, ChurnPerSec: 30},
		{Impl: ImplOurs, RTTMs: 2, PickNs: 200, PickAllocs: 2, ChurnPerSec: 40},
		{Impl: ImplOurs, RTTMs: 2, Error: "failed"},
	}
	got := MedianDiscovery(rows)
	if len(got) != 2 || got[0].Impl != ImplOurs || got[1].Impl != ImplCurator {
		t.Fatalf("MedianDiscovery = %+v", got)
	}
	o := got[0]
	// Each figure its own median: the pick's round gives the allocations.
	if o.PickNs != 200 || o.PickAllocs != 2 || o.ChurnPerSec != 30 {
		t.Fatalf("median row %+v: want pick 200 ns, 2 allocs, 30 instances/s", o)
	}
	if !slices.Equal(o.RoundsChurn, []float64{10, 30, 40}) || !slices.Equal(o.RoundsPickNs, []float64{300, 100, 200}) {
		t.Fatalf("rounds %v %v, want every good round in run order", o.RoundsChurn, o.RoundsPickNs)
	}
	if len(got[1].RoundsChurn) != 0 {
		t.Fatalf("one round kept rounds %v", got[1].RoundsChurn)
	}
	var out bytes.Buffer
	WriteDiscovery(&out, 3, &DiscoveryReport{Settings: DiscoverySettings{Instances: 8, Picks: 10, Churn: 20, Workers: 2},
		Tables: []DiscoveryTable{{RTTMs: 2, MeasuredRTTMs: 2.1, Rows: got}}})
	for _, want := range []string{
		"## service discovery, RTT 2ms (an exists takes 2.100 ms)",
		"gocurator | 200.0 | 2.00 | 0.0 | 30 | 6.00x | 0.00 | 0.00",
		"Curator (Java) | 900.0 | - | 0.0 | 5 | - | - | -",
	} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("WriteDiscovery:\n%s\nwant %q", out.String(), want)
		}
	}
}

// A short run of our side: sane figures, and nothing left registered.
func TestRunOurDiscovery(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := "/discovery-" + testkit.Unique(t)
	s := DiscoverySettings{Instances: 4, Picks: 10_000, Churn: 40, Workers: 4}
	r, err := RunOurDiscovery(ctx, zkAddr, zkAddr, base, s)
	if err != nil {
		t.Fatal(err)
	}
	// The server is shared with other tests: at least a create and a
	// delete per instance.
	if r.Impl != ImplOurs || r.PickNs <= 0 || r.PickAllocs < 0 || r.ChurnPerSec <= 0 || r.ChurnWrites < 2 {
		t.Fatalf("result %+v", r)
	}
	c := testkit.Connect(t, zkAddr, "")
	for _, svc := range []string{"svc", "churn"} {
		if kids, _, err := c.Children(ctx, base+"/"+svc); err == nil && len(kids) > 0 {
			t.Fatalf("%s/%s: %d instances left", base, svc, len(kids))
		}
	}
}

// The churn's floor: a create and a delete per instance, nothing left.
func TestRunRawDiscovery(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := "/curatorbench/discovery-raw-" + testkit.Unique(t)
	s := DiscoverySettings{Instances: 1, Picks: 1, Churn: 40, Workers: 4}
	r, err := RunRawDiscovery(ctx, zkAddr, zkAddr, base, s)
	if err != nil {
		t.Fatal(err)
	}
	if r.Impl != ImplRaw || r.ChurnPerSec <= 0 || r.ChurnWrites < 2 {
		t.Fatalf("result %+v", r)
	}
	// With the watch: a read more per instance.
	r, err = RunRawWatchedDiscovery(ctx, zkAddr, zkAddr, base, s)
	if err != nil {
		t.Fatal(err)
	}
	if r.Impl != ImplRawWatched || r.ChurnPerSec <= 0 || r.ChurnWrites < 2 || r.ChurnReads < 1 {
		t.Fatalf("watched: result %+v", r)
	}
	c := testkit.Connect(t, zkAddr, "")
	if st, err := c.Exists(ctx, base); err != nil || st != nil {
		t.Fatalf("%s left behind: %v %v", base, st, err)
	}
}
