package bench

import (
	"context"
	"testing"
	"time"
)

// The loop records what Latency gives (the election's fail-over) in place
// of the acquire call's own time, unless it gives 0.
func TestCycleLatencyOverride(t *testing.T) {
	nop := func(context.Context) error { return nil }
	for _, tt := range []struct {
		name    string
		latency func() time.Duration
		want    func(time.Duration) bool
	}{
		{"no override", nil, func(d time.Duration) bool { return d < time.Hour }},
		{"override", func() time.Duration { return time.Hour }, func(d time.Duration) bool { return d == time.Hour }},
		{"zero keeps the call's", func() time.Duration { return 0 }, func(d time.Duration) bool { return d < time.Hour }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := cycle(context.Background(), Locker{Acquire: nop, Release: nop, Latency: tt.latency}, 0)
			if err != nil || !tt.want(d) {
				t.Fatalf("cycle = %v, %v", d, err)
			}
		})
	}
}

func TestResignClock(t *testing.T) {
	c := resignClock{base: time.Now()}
	if d := c.since(time.Now()); d != 0 {
		t.Fatalf("before any resignation: %v, want 0", d)
	}
	c.stamp()
	at := c.base.Add(time.Duration(c.last.Load()) + 3*time.Millisecond)
	if d := c.since(at); d != 3*time.Millisecond {
		t.Fatalf("since = %v, want 3ms", d)
	}
}

// Both sides of the election row run against a real server and report a
// fail-over for every measured term.
func TestElectionRow(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := CuratorReady(); err != nil {
		t.Fatalf("Curator's side cannot run: %v", err)
	}
	wl, ok := Lookup(Election, ImplOurs)
	if !ok {
		t.Fatal("no election workload of ours")
	}
	jw, ok := CuratorWorkload(Election)
	if !ok {
		t.Fatal("no Curator election workload")
	}
	for _, impl := range []string{ImplOurs, ImplCurator} {
		cfg := Config{Servers: zkAddr, Path: PathFor(Scenario{Name: Election, Clients: 2}, impl), Clients: 2,
			Hold: ElectionHold, Warmup: 500 * time.Millisecond, Measure: time.Second}
		var (
			r   Result
			err error
		)
		if impl == ImplOurs {
			r, err = Run(ctx, cfg, wl)
		} else {
			r, err = RunCurator(ctx, cfg, jw, "")
		}
		if err != nil {
			t.Fatalf("%s: %v", impl, err)
		}
		t.Logf("%s: %.0f terms/s, fail-over p50 %.2f ms, p99 %.2f ms", impl, r.OpsPerSec, r.P50Ms, r.P99Ms)
		if r.Workload != Election || r.Ops <= 0 || r.P50Ms <= 0 || r.P99Ms < r.P50Ms {
			t.Fatalf("%s: implausible row %+v", impl, r)
		}
	}
}
