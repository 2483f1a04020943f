package bench

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// Result is one row of the table: one implementation of one workload at
// one client count (sessions), hold time and round-trip time. Latencies are
// those of acquire, in milliseconds.
type Result struct {
	Workload string `json:"workload"`
	Impl     string `json:"impl"`
	Clients  int    `json:"clients"`
	// PerSession is the goroutines (Java threads) per session, 0 for one.
	PerSession int `json:"per_session,omitempty"`
	MaxLeases  int `json:"max_leases,omitempty"`
	// HoldMs is the critical section: how long each holder keeps the lock
	// before it releases it.
	HoldMs float64 `json:"hold_ms,omitempty"`
	// RTTMs is the round-trip time the proxy added (twice its one-way
	// delay); 0 when the clients talked to the server directly.
	RTTMs     float64 `json:"rtt_ms"`
	Ops       int64   `json:"ops"`     // cycles completed in the measured period
	Seconds   float64 `json:"seconds"` // length of the measured period
	OpsPerSec float64 `json:"ops_per_sec"`
	P50Ms     float64 `json:"p50_ms"`
	P90Ms     float64 `json:"p90_ms"`
	P99Ms     float64 `json:"p99_ms"`
	MaxMs     float64 `json:"max_ms"`
	MeanMs    float64 `json:"mean_ms"`
	// Error says why the run failed or was skipped; the numbers are then 0.
	Error string `json:"error,omitempty"`
	// RoundsOpsPerSec holds every round's throughput when the row is the
	// median of several rounds (see Median).
	RoundsOpsPerSec []float64 `json:"rounds_ops_per_sec,omitempty"`

	// The columns below are per cycle (one acquisition and its release),
	// over the cycles that completed in the measured period (WindowCycles),
	// and are 0 when not measured.

	// WindowCycles is the number of cycles that completed in the measured
	// period, started before it or not: the denominator of the counts.
	WindowCycles int64 `json:"window_cycles,omitempty"`
	// Server holds the server's counters over the measured period (mntr).
	Server *ServerCounters `json:"server,omitempty"`
	// RequestsPerCycle is (Server.Reads + Server.Writes) / WindowCycles:
	// the requests the server answered per acquisition.
	RequestsPerCycle float64 `json:"requests_per_cycle,omitempty"`
	// ReadsPerCycle and WritesPerCycle split it.
	ReadsPerCycle  float64 `json:"reads_per_cycle,omitempty"`
	WritesPerCycle float64 `json:"writes_per_cycle,omitempty"`
	// NotificationsPerCycle is the watch notifications the server sent
	// per cycle.
	NotificationsPerCycle float64 `json:"notifications_per_cycle,omitempty"`
	// OpsPerCycle is the server's request trace, by request type, per
	// cycle, from a short window after the measured period (see OpTrace).
	OpsPerCycle map[string]float64 `json:"ops_per_cycle,omitempty"`
	// CPUPerCycleUs is the client process's CPU time per cycle in
	// microseconds: this process's (getrusage) for the Go implementations,
	// which run one at a time; the JVM's for Curator.
	CPUPerCycleUs float64 `json:"cpu_us_per_cycle,omitempty"`
	// AllocsPerCycle is this process's heap allocations per cycle
	// (runtime.MemStats.Mallocs), less the loop's own (HarnessAllocs); Go
	// implementations only.
	AllocsPerCycle float64 `json:"allocs_per_cycle,omitempty"`
}

// Median merges rows of several rounds: for each workload, impl and client
// count it keeps the round with the median throughput (the lower one of an
// even count) and records every round's throughput. Order is that of the
// first appearance.
func Median(rows []Result) Rows {
	type key struct {
		w, i      string
		c         int
		hold, rtt float64
	}
	var order []key
	groups := map[key][]Result{}
	for _, r := range rows {
		k := key{r.Workload, r.Impl, r.Clients, r.HoldMs, r.RTTMs}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	out := make(Rows, 0, len(order))
	for _, k := range order {
		g := groups[k]
		var ok []Result
		var tps []float64
		for _, r := range g {
			if r.OK() {
				ok = append(ok, r)
			}
			tps = append(tps, r.OpsPerSec)
		}
		if len(ok) == 0 {
			out = append(out, g[0])
			continue
		}
		slices.SortFunc(ok, func(a, b Result) int { return cmp.Compare(a.OpsPerSec, b.OpsPerSec) })
		m := ok[(len(ok)-1)/2]
		if len(g) > 1 {
			m.RoundsOpsPerSec = tps
		}
		// The request trace runs in one round only.
		for _, r := range ok {
			if m.OpsPerCycle == nil && r.OpsPerCycle != nil {
				m.OpsPerCycle = r.OpsPerCycle
			}
		}
		out = append(out, m)
	}
	return out
}

// OK reports whether the row has measurements.
func (r Result) OK() bool { return r.Error == "" && r.Ops > 0 }

// summarize fills r's numbers from the acquire latencies of the measured
// cycles and the measured period's length.
func summarize(r Result, lat []time.Duration, period time.Duration) Result {
	slices.Sort(lat)
	r.Ops = int64(len(lat))
	r.Seconds = period.Seconds()
	if r.Seconds > 0 {
		r.OpsPerSec = float64(r.Ops) / r.Seconds
	}
	if len(lat) == 0 {
		return r
	}
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	r.P50Ms = ms(percentile(lat, 0.50))
	r.P90Ms = ms(percentile(lat, 0.90))
	r.P99Ms = ms(percentile(lat, 0.99))
	r.MaxMs = ms(lat[len(lat)-1])
	r.MeanMs = ms(sum / time.Duration(len(lat)))
	return r
}

// percentile is the nearest-rank percentile of sorted, the same definition
// as Bench.java's.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(len(sorted)-1, i))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// applyWindow fills r's per-cycle columns from what drive measured.
func applyWindow(r *Result, w window) {
	r.WindowCycles = w.cycles
	if w.cycles <= 0 {
		return
	}
	n := float64(w.cycles)
	if w.server != nil {
		s := *w.server
		r.Server = &s
		r.RequestsPerCycle = float64(s.Requests()) / n
		r.ReadsPerCycle = float64(s.Reads) / n
		r.WritesPerCycle = float64(s.Writes) / n
		r.NotificationsPerCycle = float64(s.Notifications) / n
	}
	if w.cpu >= 0 {
		r.CPUPerCycleUs = float64(w.cpu) / float64(time.Microsecond) / n
	}
	if w.hasMallocs {
		r.AllocsPerCycle = max(0, float64(w.mallocs)/n-HarnessAllocs())
	}
	if w.opCycles > 0 && len(w.ops) > 0 {
		r.OpsPerCycle = make(map[string]float64, len(w.ops))
		for op, c := range w.ops {
			r.OpsPerCycle[op] = float64(c) / float64(w.opCycles)
		}
	}
}
