package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gocurator/curator/cmd/internal/bench"
)

// runWatch runs the watch-delivery benchmark at one round-trip time:
// every subscriber (Curator's too when it can run) once per round, the
// rounds interleaved, and adds the median rows to rep.
func runWatch(ctx context.Context, f flags, srv *server, servers string, rtt, measured time.Duration, curatorOK bool,
	rep *bench.Report, logf func(string, ...any)) error {
	t := bench.WatchTable{RTTMs: ms(rtt), MeasuredRTTMs: ms(measured), LoadAvg: bench.LoadAvg()}
	var all []bench.WatchResult
	defer func() {
		t.Rows = bench.MedianWatch(all)
		rep.Watch = append(rep.Watch, t)
	}()
	for round := range f.rounds {
		if f.rounds > 1 {
			logf("watch, RTT %v: round %d of %d", rtt, round+1, f.rounds)
		}
		for _, sub := range bench.WatchSubscribers {
			if bench.IsCurator(sub) && !curatorOK {
				continue
			}
			cfg := bench.WatchConfig{Servers: servers, Server: srv.first, Tree: f.watchTree, Samples: f.watchSamples,
				Burst: f.watchBurst, Writers: f.watchWriters,
				Root: fmt.Sprintf("/curatorbench/watch-%d", time.Now().UnixNano())}
			r, err := bench.RunWatch(ctx, cfg, sub, rtt)
			if err != nil {
				logf("watch %s, RTT %v: FAILED: %v", sub, rtt, firstLine(err.Error()))
			} else {
				logf("watch %s, RTT %v: p50 %.3f ms, p99 %.3f ms, %.0f changes/s (%d of %d delivered), %d watched paths",
					sub, rtt, r.P50Ms, r.P99Ms, r.ChangesPerSec, r.Delivered, r.Burst, r.WatchedPaths)
			}
			all = append(all, r)
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

// printWatch prints the watch-delivery tables.
func printWatch(w io.Writer, rep *bench.Report) {
	s := rep.Settings.Watch
	if s == nil {
		return
	}
	fmt.Fprintf(w, "# watch delivery: %d interleaved rounds, each cell the median of the rounds; watched tree %d nodes\n",
		rep.Settings.Rounds, s.Tree+2)
	fmt.Fprintf(w, "# latency = writer's setData call until the subscriber's callback (Go: the event read from Events), %d samples a run\n", s.Samples)
	fmt.Fprintf(w, "# changes/s = %d setData to one node from %d goroutines on one session, over the time until the subscriber saw the end marker written after them;\n", s.Burst, s.Writers)
	fmt.Fprintln(w, "# delivered = data-change events the subscriber got for them; writer/s = the server's pace (replies to the writer)")
	fmt.Fprintln(w, "# watched paths = wchc lines of the subscriber's session; watch entries = added to mntr zk_watch_count (data and child tables); left = after close")
	for _, t := range rep.Watch {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "## watch delivery, RTT %s (an exists takes %.3f ms)\n", rttLabel(t.RTTMs), t.MeasuredRTTMs)
		if t.LoadAvg != "" {
			fmt.Fprintf(w, "# load average at the start: %s\n", t.LoadAvg)
		}
		fmt.Fprintln(w)
		cells := [][]string{{"subscriber", "p50 ms", "p90 ms", "p99 ms", "changes/s", "delivered", "writer/s", "watched paths", "watch entries", "left"}}
		for _, r := range t.Rows {
			if r.Error != "" {
				cells = append(cells, []string{r.Subscriber, "FAILED: " + firstLine(r.Error)})
				continue
			}
			cells = append(cells, []string{r.Subscriber,
				fmt.Sprintf("%.3f", r.P50Ms), fmt.Sprintf("%.3f", r.P90Ms), fmt.Sprintf("%.3f", r.P99Ms),
				fmt.Sprintf("%.0f", r.ChangesPerSec), fmt.Sprintf("%d/%d", r.Delivered, r.Burst), fmt.Sprintf("%.0f", r.WriterPerSec),
				fmt.Sprint(r.WatchedPaths), fmt.Sprint(r.WatchEntries), fmt.Sprint(r.WatchesLeft)})
		}
		for _, row := range cells {
			fmt.Fprintln(w, strings.Join(row, " | "))
		}
	}
}

func rttLabel(rttMs float64) string {
	if rttMs == 0 {
		return "0 (direct)"
	}
	return time.Duration(rttMs * float64(time.Millisecond)).String()
}
