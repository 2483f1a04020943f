package main

import (
	"fmt"
	"io"
	"os"

	"github.com/gocurator/curator/cmd/internal/bench"
)

// printReport prints the header line, a table per round-trip time (or the
// scale results), what was skipped, the extras and the targets.
func printReport(w io.Writer, f flags, rep *bench.Report) {
	fmt.Fprintln(w, rep.Header)
	if rep.Scale != nil {
		printScale(w, rep.Scale)
		return
	}
	// The runs that replace the lock table: the command, their tables,
	// what was skipped.
	var rows func()
	switch {
	case rep.Atomic != nil:
		rows = func() { bench.WriteAtomic(w, rep.Settings.Rounds, rep.Atomic) }
	case rep.Queue != nil:
		rows = func() { bench.WriteQueue(w, rep.Settings.Rounds, rep.Queue) }
	case rep.Discovery != nil:
		rows = func() { bench.WriteDiscovery(w, rep.Settings.Rounds, rep.Discovery) }
	case rep.Settings.Watch != nil || len(rep.Settings.CacheTrees) > 0:
		rows = func() { printWatch(w, rep); printCache(w, rep) }
	}
	if rows != nil {
		fmt.Fprintf(w, "# %s\n", rep.Settings.Command)
		rows()
		for _, s := range rep.Skipped {
			fmt.Fprintln(w, s)
		}
		return
	}
	fmt.Fprintf(w, "# %s\n", rep.Settings.Command)
	fmt.Fprintf(w, "# warm-up %v, measured %v per run; %d interleaved rounds, each row the round with the median throughput\n",
		f.warmup, f.duration, f.rounds)
	fmt.Fprintln(w, "# latency = acquire call until held; per acq = per acquire+release cycle; requests and notifications from the server's mntr counters;")
	fmt.Fprintln(w, "# requests by type from the server's request trace (first round); CPU = client process CPU time (Go: this process, Curator: its JVM)")
	fmt.Fprintf(w, "# allocs/acq: Go heap allocations per cycle, less the benchmark loop's own %.0f\n", bench.HarnessAllocs())
	for _, t := range rep.Tables {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "## %s\n", t.Title())
		if t.LoadAvg != "" {
			fmt.Fprintf(w, "# load average at the start: %s", t.LoadAvg)
			if t.ProxyCPU > 0 {
				fmt.Fprintf(w, "; the proxy process used %.0f%% of a core", 100*t.ProxyCPU)
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w)
		bench.WriteTable(w, t)
	}
	if len(rep.Skipped) > 0 {
		fmt.Fprintln(w)
	}
	for _, s := range rep.Skipped {
		fmt.Fprintln(w, s)
	}
	if len(rep.Sweep) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "# mutex sweep (first RTT)")
		rtt := 0.0
		if len(rep.Tables) > 0 {
			rtt = rep.Tables[0].MeasuredRTTMs
		}
		bench.WriteTable(w, bench.Table{Rows: rep.Sweep, MeasuredRTTMs: rtt})
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
		// The target: under 20 MiB for 1,000 waiting handles on one client.
		verdict := "MET"
		if s.HeapBytes >= int64(s.Waiters)*20<<10 {
			verdict = "MISSED"
		}
		fmt.Fprintf(w, "one client with %d waiters: heap %.1f MiB (connection included; target < 20 MiB per 1,000 waiters: %s), stack %.1f MiB\n",
			s.Waiters, float64(s.HeapBytes)/(1<<20), verdict, float64(s.StackBytes)/(1<<20))
	}
}

// writeRTTChart draws the contended mutex's throughput (f.clients
// sessions, no hold) against the round-trip time.
func writeRTTChart(path string, f flags, tables []bench.Table) error {
	var ticks []float64
	for _, t := range tables {
		ticks = append(ticks, t.RTTMs)
	}
	c := bench.Chart{
		Title:  fmt.Sprintf("Contended mutex, %d sessions: throughput vs round-trip time", f.clients),
		XLabel: "round-trip time added between client and ZooKeeper (ms)",
		YLabel: "acquisitions / s",
		Series: bench.SeriesByRTT(tables, bench.Mutex, f.clients, 0),
		XTicks: ticks,
	}
	return writeChart(path, c)
}

func writeChart(path string, c bench.Chart) error {
	format, err := bench.ChartFormat(path)
	if err != nil {
		return err
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	err = c.Draw(out, format)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
