package bench

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// Both sides of the cohort-procs row run against a real server with a
// process per session and report the cycles and latencies of every
// process: the row's cycles match the counts the children reported at the
// phase switches, within the cycles that straddle a switch.
func TestCohortProcsRow(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := CuratorReady(); err != nil {
		t.Fatalf("Curator's side cannot run: %v", err)
	}
	s := Scenario{Name: CohortProcs, Clients: 2, PerSession: 3}
	for _, wl := range Available(CohortProcs) {
		cfg := Config{Servers: zkAddr, Path: PathFor(s, wl.Impl), Clients: s.Clients, PerSession: s.PerSession,
			Warmup: 300 * time.Millisecond, Measure: time.Second, Procs: true}
		r, err := Run(ctx, cfg, wl)
		if err != nil {
			t.Fatalf("%s: %v", wl.Label(), err)
		}
		checkProcsRow(t, wl.Label(), r)
		if wl.Impl == ImplOurs && r.AllocsPerCycle <= 0 {
			t.Errorf("%s: no allocations counted from the children: %+v", wl.Label(), r)
		}
	}
	jw, ok := CuratorWorkload(CohortProcs)
	if !ok {
		t.Fatal("no Curator workload for cohort-procs")
	}
	cfg := Config{Servers: zkAddr, Path: PathFor(s, ImplCurator), Clients: s.Clients, PerSession: s.PerSession,
		Warmup: 500 * time.Millisecond, Measure: time.Second, Procs: true}
	r, err := RunCurator(ctx, cfg, jw, CohortProcs)
	if err != nil {
		t.Fatalf("Curator: %v", err)
	}
	checkProcsRow(t, "Curator", r)
}

func checkProcsRow(t *testing.T, label string, r Result) {
	t.Helper()
	t.Logf("%s: %.0f cycles/s, p50 %.2f ms, p99 %.2f ms, CPU %.0f µs/cycle", label, r.OpsPerSec, r.P50Ms, r.P99Ms, r.CPUPerCycleUs)
	if r.Error != "" || r.Ops <= 0 || r.P50Ms <= 0 || r.P99Ms < r.P50Ms || r.CPUPerCycleUs <= 0 {
		t.Fatalf("%s: implausible row %+v", label, r)
	}
	// Every session's goroutines cycle for about the whole period, so
	// the window counts at least the measured cycles less the few (one
	// per goroutine) that straddled a switch.
	if r.WindowCycles < r.Ops-int64(2*3) || r.WindowCycles > 2*r.Ops+12 {
		t.Fatalf("%s: %d cycles in the window against %d measured", label, r.WindowCycles, r.Ops)
	}
}

// A session process that cannot run its workload fails the run with its
// reason instead of hanging it.
func TestProcsChildFailure(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	wl := Workload{Name: "no-such-workload", Impl: ImplOurs}
	cfg := Config{Servers: zkAddr, Path: PathFor(Scenario{Name: CohortProcs, Clients: 1}, ImplOurs), Clients: 1,
		Measure: time.Second, Procs: true}
	_, err := Run(ctx, cfg, wl)
	if err == nil || !strings.Contains(err.Error(), "no workload no-such-workload") {
		t.Fatalf("Run = %v, want the child's reason", err)
	}
}

// The child's protocol, served in this process: READY, an AT answer per
// phase with the cycles of the phase that ended, then the latencies.
func TestServeSession(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	spec := `{"servers":"` + zkAddr + `","path":"` + PathFor(Scenario{Name: CohortProcs, Clients: 1}, ImplOurs) +
		`","workload":"cohort-procs","impl":"gocurator","per_session":2}`
	if err := EnsurePath(ctx, zkAddr, "/curatorbench"); err != nil {
		t.Fatal(err)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- serveSession(ctx, spec, inR, outW)
		outW.Close()
	}()
	c := &child{lines: make(chan string, 16), failed: make(chan string, 1), stderr: &tailWriter{max: 1024}}
	go c.read(outR)
	if _, err := c.await("READY", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"measure", "stop"} {
		time.Sleep(200 * time.Millisecond) // a measured period, not a wait for a condition
		if _, err := inW.WriteString(step + "\n"); err != nil {
			t.Fatal(err)
		}
		line, err := c.await("AT "+step+" ", 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if f := strings.Fields(line); len(f) != 5 || f[3] == "0" {
			t.Fatalf("answer %q: want AT phase cpu cycles mallocs with cycles", line)
		}
	}
	line, err := c.await("{", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(line, `"lat_ns":[`) {
		t.Fatalf("result %q", line)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outR.Close()
}
