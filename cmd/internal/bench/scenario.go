package bench

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Scenario is one group of rows of a table: a workload at a number of
// sessions with a critical section, run by every implementation that has
// it (ours, go-zookeeper's zk.Lock, Curator).
type Scenario struct {
	// Name is the workload (Mutex, Uncontended, Read, ...).
	Name string
	// Clients is the number of sessions, one goroutine (or Java thread)
	// each unless PerSession says more.
	Clients int
	// PerSession is the goroutines (Java threads) per session, 0 for one.
	PerSession int
	// Hold is the critical section: how long a holder keeps the lock.
	Hold time.Duration
	// MaxLeases is the number of leases of the semaphore workloads.
	MaxLeases int
}

// Label names the scenario in messages: "mutex, 8 sessions, hold 5ms".
func (s Scenario) Label() string {
	parts := []string{s.Name, fmt.Sprintf("%d sessions", s.Clients)}
	if s.Clients == 1 {
		parts[1] = "1 session"
	}
	if s.PerSession > 1 {
		parts[1] += fmt.Sprintf(" x %d goroutines", s.PerSession)
	}
	if s.Hold > 0 {
		parts = append(parts, "hold "+s.Hold.String())
	}
	if s.Name == Semaphore || s.Name == SemaphoreV2 {
		parts = append(parts, fmt.Sprintf("%d leases", s.MaxLeases))
	}
	return strings.Join(parts, ", ")
}

// Plan is how a table's scenarios are run: where the clients connect, for
// how long, and with which peers.
type Plan struct {
	// Servers is what the clients connect to: the server, or a proxy in
	// front of it.
	Servers string
	// RTT is the round trip the proxy adds (0: none), recorded in the rows.
	RTT time.Duration
	// Warmup and Measure are the unmeasured and measured periods of a run.
	Warmup, Measure time.Duration
	// Meter reads the server's counters (nil: not measured). Its trace
	// window applies only to runs asked to trace.
	Meter *Meter
	// Peers runs go-zookeeper's zk.Lock where it has an equivalent;
	// Curator runs Curator (Java) where it has one.
	Peers, Curator bool
	// Logf receives progress lines.
	Logf func(format string, args ...any)
}

// RunScenario runs every implementation of s once, ours first, then
// zk.Lock, then Curator, one after the other (so that each Go
// implementation's CPU time is its own), and returns their rows. With trace,
// each run also counts the server's requests by type after its measured
// period. A failed run gives a row with its error; the error returned is
// only ctx's.
func (p Plan) RunScenario(ctx context.Context, s Scenario, trace bool) []Result {
	logf := p.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	meter := p.Meter
	if meter != nil && !trace {
		m := *meter
		m.TraceWindow = 0
		meter = &m
	}
	cfg := func(impl string) Config {
		return Config{Servers: p.Servers, Path: PathFor(s, impl), Clients: s.Clients, PerSession: s.PerSession, MaxLeases: s.MaxLeases,
			Hold: s.Hold, Warmup: p.Warmup, Measure: p.Measure, Meter: meter, Procs: s.Name == CohortProcs}
	}
	var out []Result
	add := func(r Result, err error, label string) {
		r.Workload, r.RTTMs = s.Name, ms(p.RTT)
		if err != nil {
			logf("%s %s: FAILED: %v", s.Label(), label, firstLine(err.Error()))
		} else {
			logf("%s %s: %.0f cycles/s, p99 %.2f ms", s.Label(), label, r.OpsPerSec, r.P99Ms)
		}
		out = append(out, r)
	}
	for _, wl := range Available(registryName(s.Name)) {
		if wl.Peer && !p.Peers {
			continue
		}
		if ctx.Err() != nil {
			return out
		}
		r, err := Run(ctx, cfg(wl.Impl), wl)
		add(r, err, wl.Impl)
	}
	if jw, ok := CuratorWorkload(s.Name); ok && p.Curator && ctx.Err() == nil {
		r, err := RunCurator(ctx, cfg(ImplCurator), jw, s.Name)
		add(r, err, ImplCurator)
	}
	return out
}

// Runs is how many runs RunScenario makes for s.
func (p Plan) Runs(s Scenario) int {
	n := 0
	for _, wl := range Available(registryName(s.Name)) {
		if !wl.Peer || p.Peers {
			n++
		}
	}
	if _, ok := CuratorWorkload(s.Name); ok && p.Curator {
		n++
	}
	return n
}

// PathFor is a lock path of its own for every run.
func PathFor(s Scenario, impl string) string {
	short := map[string]string{
		ImplOurs: "gocurator", ImplRaw: "raw", ImplZKLock: "zklock", ImplCurator: "curator",
	}[impl]
	if short == "" {
		short = "impl"
	}
	return fmt.Sprintf("/curatorbench/%s-%s-%dc-%d", s.Name, short, s.Clients, time.Now().UnixNano())
}
