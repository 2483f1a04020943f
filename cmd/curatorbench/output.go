package main

import (
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/gocurator/curator/internal/bench"
)

// printReport prints the header line, the table (or the scale results),
// what was skipped and the targets.
func printReport(w io.Writer, f flags, rep *bench.Report) {
	fmt.Fprintln(w, rep.Header)
	if rep.Scale != nil {
		printScale(w, rep.Scale)
		return
	}
	fmt.Fprintf(w, "# %d clients, warm-up %v, measured %v, semaphore max leases %d; latency = acquire call until held\n",
		f.clients, f.warmup, f.duration, f.maxLeases)
	if f.rounds > 1 {
		fmt.Fprintf(w, "# %d interleaved rounds: each row is the round with the median throughput\n", f.rounds)
	}
	if len(rep.Results) > 0 {
		bench.WriteTable(w, rep.Results)
	}
	for _, s := range rep.Skipped {
		fmt.Fprintln(w, s)
	}
	if u := rep.Uncontended; u != nil {
		lo, hi := 0.0, 0.0
		if len(u.RoundRatios) > 0 {
			lo, hi = slices.Min(u.RoundRatios), slices.Max(u.RoundRatios)
		}
		fmt.Fprintf(w, "uncontended (1 client, %d alternating rounds): mutex %.0f cycles/s (p50 acquire %.3f ms), raw %.0f cycles/s (p50 create+list %.3f ms): ratio %.3f (median of the rounds' ratios, range %.3f-%.3f; pooled %.3f)\n",
			u.Rounds, u.Mutex.OpsPerSec, u.Mutex.P50Ms, u.Raw.OpsPerSec, u.Raw.P50Ms, u.Ratio, lo, hi, u.PooledRatio)
	}
	if len(rep.Diagnose) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "# uncontended mutex taken apart (1 client, alternating rounds)")
		bench.WriteSteps(w, rep.Diagnose)
	}
	if len(rep.Sweep) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "# mutex sweep")
		bench.WriteTable(w, rep.Sweep)
	}
	if len(rep.Results) > 0 && len(rep.Targets) > 0 {
		fmt.Fprintln(w)
		bench.WriteTargets(w, rep.Targets)
	}
}

func printScale(w io.Writer, sc *bench.Scale) {
	fmt.Fprintf(w, "# scale: waiting mutex handles over %d clients, released one by one (each waiter releases as soon as it holds)\n", sc.Clients)
	fmt.Fprintln(w, "waiters | served (all queues) | order | enqueue s | hand-over mean ms | p50 ms | p99 ms | heap/waiter | stack/waiter | goroutines/waiter")
	row := func(label string, st bench.ScaleStep) {
		order := "OK"
		if !st.InOrder {
			order = "FAIL: " + st.Problem
		}
		per := func(b int64) string {
			if st.Waiters == 0 {
				return "-"
			}
			return fmt.Sprintf("%.1f KiB", float64(b)/float64(st.Waiters)/1024)
		}
		fmt.Fprintf(w, "%s | %d/%d | %s | %.2f | %.3f | %.3f | %.3f | %s | %s | %.1f\n",
			label, st.Served, st.Waiters*st.Repeats, order, st.EnqueueSeconds, st.HandOverMeanMs, st.HandOverP50Ms, st.HandOverP99Ms,
			per(st.HeapBytes), per(st.StackBytes), float64(st.Goroutines)/float64(max(1, st.Waiters)))
	}
	for _, st := range sc.Steps {
		row(fmt.Sprint(st.Waiters), st)
	}
	if s := sc.Single; s.Waiters > 0 {
		row(fmt.Sprintf("%d (1 client)", s.Waiters), s)
	}
	status := "OK"
	if !sc.OK() {
		status = "FAIL"
	}
	fmt.Fprintf(w, "served in sequence order: %s\n", status)
	if n := len(sc.Steps); n > 0 {
		flat := "flat"
		first, last := sc.Steps[0].HandOverMeanMs, sc.Steps[n-1].HandOverMeanMs
		if first > 0 && last/first > 1.5 {
			flat = "NOT flat"
		}
		fmt.Fprintf(w, "hand-over time:")
		for _, st := range sc.Steps {
			fmt.Fprintf(w, " %.3f ms at %d waiters;", st.HandOverMeanMs, st.Waiters)
		}
		fmt.Fprintf(w, " %s (last/first %.2f)\n", flat, last/max(first, 1e-9))
		big := sc.Steps[n-1]
		fmt.Fprintf(w, "client memory per waiting handle (%d waiters over %d clients): heap %.1f KiB, + stack %.1f KiB\n",
			big.Waiters, sc.Clients, float64(big.HeapBytes)/float64(big.Waiters)/1024, float64(big.StackBytes)/float64(big.Waiters)/1024)
	}
	if s := sc.Single; s.Waiters > 0 {
		verdict := "MET"
		if s.HeapBytes >= 20<<20 {
			verdict = "MISSED"
		}
		fmt.Fprintf(w, "one client with %d waiters: heap %.1f MiB (connection included; target < 20 MiB: %s), stack %.1f MiB\n",
			s.Waiters, float64(s.HeapBytes)/(1<<20), verdict, float64(s.StackBytes)/(1<<20))
	}
}

func writePlot(path string, rows bench.Rows) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	err = bench.WriteSVG(out, "Mutex throughput vs clients (one lock path)", "clients", "acquisitions / s",
		bench.SeriesByImpl(rows, bench.Mutex))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
