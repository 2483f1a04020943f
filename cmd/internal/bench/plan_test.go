package bench

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/gocurator/curator/zktest"
)

// A short metered run through a delayed proxy: the server's counters, the
// request trace, the client's CPU and allocations all reach the rows.
func TestPlanMetersAScenario(t *testing.T) {
	// Its own server: the request trace needs the server's JVM options,
	// and the meter reads server-wide counters.
	srv, err := zktest.Launch(zktest.WithBaseDir(t.TempDir()), zktest.WithJVMArgs(TraceJVMArgs...))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	trace, err := NewOpTrace(srv.Addr(), srv.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	p := zktest.NewProxy(t, srv.Addr())
	p.SetDelay(time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rtt, err := MeasureRTT(ctx, p.Addr(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if rtt < 2*time.Millisecond {
		t.Fatalf("round trip through the proxy %v, want at least 2ms", rtt)
	}
	plan := Plan{Servers: p.Addr(), RTT: 2 * time.Millisecond, Warmup: 300 * time.Millisecond, Measure: time.Second,
		Meter: &Meter{Server: srv.Addr(), Trace: trace, TraceWindow: 500 * time.Millisecond}, Peers: true, Logf: t.Logf}
	rows := plan.RunScenario(ctx, Scenario{Name: Uncontended, Clients: 1}, true)
	if len(rows) != 2 {
		t.Fatalf("%d rows, want gocurator and zk.Lock: %+v", len(rows), rows)
	}
	for _, r := range rows {
		t.Logf("%s: %.0f cycles/s, %.2f requests/acq (%.2f/%.2f), ops %s, %.0f µs CPU, %.0f allocs",
			r.Impl, r.OpsPerSec, r.RequestsPerCycle, r.ReadsPerCycle, r.WritesPerCycle, OpsString(r.OpsPerCycle), r.CPUPerCycleUs, r.AllocsPerCycle)
		if !r.OK() || r.Workload != Uncontended || r.RTTMs != 2 || r.Clients != 1 {
			t.Fatalf("row %+v", r)
		}
		// Every lock creates and deletes a node per cycle and reads at
		// least once; none needs more than a handful of requests alone.
		if r.WritesPerCycle < 1.8 || r.WritesPerCycle > 2.5 || r.RequestsPerCycle < 2.8 || r.RequestsPerCycle > 6 {
			t.Errorf("%s: %.2f requests (%.2f writes) per cycle", r.Impl, r.RequestsPerCycle, r.WritesPerCycle)
		}
		if c, d := r.OpsPerCycle["create"]+r.OpsPerCycle["create2"], r.OpsPerCycle["delete"]; math.Abs(c-1) > 0.2 || math.Abs(d-1) > 0.2 {
			t.Errorf("%s: ops by type %v, want one create and one delete per cycle", r.Impl, r.OpsPerCycle)
		}
		if r.CPUPerCycleUs <= 0 || r.AllocsPerCycle <= 0 {
			t.Errorf("%s: CPU %v µs, allocs %v per cycle", r.Impl, r.CPUPerCycleUs, r.AllocsPerCycle)
		}
		// Two round trips at least (acquire, release) of at least 2ms.
		if r.OpsPerSec > 250 {
			t.Errorf("%s: %.0f cycles/s through a 2ms round trip", r.Impl, r.OpsPerSec)
		}
	}
}
