package bench

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// UncontendedResult compares one client of our mutex with one client of
// the raw floor: the requests a lock needs and nothing else.
type UncontendedResult struct {
	Mutex Result `json:"mutex"`
	Raw   Result `json:"raw"`
	// Ratio is the median over the rounds of the mutex's throughput over
	// raw's in the same round (1 = as fast as raw): each round runs the
	// two back to back, so a burst of load from other processes skews one
	// round's pair rather than one side.
	Ratio float64 `json:"ratio"`
	// PooledRatio is Mutex.OpsPerSec / Raw.OpsPerSec over all rounds.
	PooledRatio float64 `json:"pooled_ratio"`
	// RoundRatios are the per-round ratios, in round order.
	RoundRatios []float64 `json:"round_ratios"`
	// Rounds is how many alternating rounds each side ran.
	Rounds int `json:"rounds"`
}

// alternatingRounds: the sides of a 1-client comparison alternate in
// rounds so that drift of the machine or the server (JIT, GC, log roll)
// hits all alike.
const alternatingRounds = 10

// RunUncontended runs 1 client of raw and of our mutex in alternating
// rounds, each with its own warm-up, over measure in total per side.
func RunUncontended(ctx context.Context, servers, path string, warmup, measure time.Duration) (UncontendedResult, error) {
	raw, _ := Lookup(Raw, ImplRaw)
	mu, _ := Lookup(Mutex, ImplOurs)
	rs, rounds, err := runAlternating(ctx, servers, path, warmup, measure, []Workload{raw, mu})
	if err != nil {
		return UncontendedResult{}, fmt.Errorf("uncontended: %w", err)
	}
	out := UncontendedResult{Raw: rs[0], Mutex: rs[1], Rounds: alternatingRounds}
	out.Raw.Workload, out.Mutex.Workload = Uncontended, Uncontended
	if out.Raw.OpsPerSec > 0 {
		out.PooledRatio = out.Mutex.OpsPerSec / out.Raw.OpsPerSec
	}
	for i := range rounds[0] {
		if rounds[0][i] > 0 {
			out.RoundRatios = append(out.RoundRatios, rounds[1][i]/rounds[0][i])
		}
	}
	if n := len(out.RoundRatios); n > 0 {
		sorted := slices.Sorted(slices.Values(out.RoundRatios))
		out.Ratio = (sorted[(n-1)/2] + sorted[n/2]) / 2
	}
	return out, nil
}

// RunAlternating runs each workload with 1 client, in alternating rounds,
// over measure in total per workload, and returns their rows in order.
func RunAlternating(ctx context.Context, servers, path string, warmup, measure time.Duration, wls []Workload) ([]Result, error) {
	rs, _, err := runAlternating(ctx, servers, path, warmup, measure, wls)
	return rs, err
}

// runAlternating also returns each workload's throughput in every round.
func runAlternating(ctx context.Context, servers, path string, warmup, measure time.Duration, wls []Workload) ([]Result, [][]float64, error) {
	rounds := make([][]float64, len(wls))
	lats := make([][]time.Duration, len(wls))
	periods := make([]time.Duration, len(wls))
	roundWarm := max(warmup/alternatingRounds, 200*time.Millisecond)
	roundMeasure := measure / alternatingRounds
	for i := range alternatingRounds {
		for j, wl := range wls {
			cfg := Config{Servers: servers, Path: fmt.Sprintf("%s-%d-%d", path, j, i),
				Clients: 1, Warmup: roundWarm, Measure: roundMeasure}
			lat, period, err := run(ctx, cfg, wl)
			if err != nil {
				return nil, nil, err
			}
			rounds[j] = append(rounds[j], float64(len(lat))/period.Seconds())
			lats[j] = append(lats[j], lat...)
			periods[j] += period
		}
	}
	out := make([]Result, len(wls))
	for j, wl := range wls {
		out[j] = summarize(Result{Workload: wl.Name, Impl: wl.Impl, Clients: 1}, lats[j], periods[j])
	}
	return out, rounds, nil
}
