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

func TestMedianAtomic(t *testing.T) {
	rows := []AtomicResult{
		{Impl: ImplOurs, RTTMs: 2, IncrementsPerSec: 100, RoundMs: 30},
		{Impl: ImplCurator, RTTMs: 2, IncrementsPerSec: 50, RoundMs: 60},
		{Impl: ImplOurs, RTTMs: 2, IncrementsPerSec: 300, RoundMs: 10},
		{Impl: ImplOurs, RTTMs: 2, IncrementsPerSec: 200, RoundMs: 20},
		{Impl: ImplOurs, RTTMs: 2, Error: "failed"},
	}
	got := MedianAtomic(rows)
	if len(got) != 2 || got[0].Impl != ImplOurs || got[1].Impl != ImplCurator {
		t.Fatalf("MedianAtomic = %+v", got)
	}
	o := got[0]
	if o.IncrementsPerSec != 200 || o.RoundMs != 20 {
		t.Fatalf("median row %+v: want 200 increments/s, 20 ms", o)
	}
	if !slices.Equal(o.RoundsIncrements, []float64{100, 300, 200}) || !slices.Equal(o.RoundsRoundMs, []float64{30, 10, 20}) {
		t.Fatalf("rounds %v %v, want every good round in run order", o.RoundsIncrements, o.RoundsRoundMs)
	}
	var out bytes.Buffer
	WriteAtomic(&out, 3, &AtomicReport{Settings: AtomicSettings{Clients: 8, Increments: 10, BarrierRounds: 5},
		Tables: []AtomicTable{{RTTMs: 2, MeasuredRTTMs: 2.1, Rows: got}}})
	for _, want := range []string{
		"## atomic counter and double barrier, RTT 2ms (an exists takes 2.100 ms)",
		"gocurator | 200 | 4.00x | 20.00 | 0.33x",
		"Curator (Java) | 50 | - | 60.00 | -",
	} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("WriteAtomic:\n%s\nwant %q", out.String(), want)
		}
	}
}

// A short run of our side: sane figures, the counter read back exact (or
// the run fails), and no barrier member left.
func TestRunOurAtomic(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := "/atomic-" + testkit.Unique(t)
	r, err := RunOurAtomic(ctx, zkAddr, base, AtomicSettings{Clients: 3, Increments: 20, BarrierRounds: 3})
	if err != nil {
		t.Fatal(err)
	}
	if r.Impl != ImplOurs || r.IncrementsPerSec <= 0 || r.RoundMs <= 0 {
		t.Fatalf("result %+v", r)
	}
	c := testkit.Connect(t, zkAddr, "")
	for _, round := range []string{"w0", "r0", "r1", "r2"} {
		if kids, _, err := c.Children(ctx, base+"/barrier/"+round); err == nil && len(kids) > 0 {
			t.Fatalf("barrier round %s: %v left", round, kids)
		}
	}
}
