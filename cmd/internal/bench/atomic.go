package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gocurator/curator/cmd/internal/javabench"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/atomic"
	"github.com/gocurator/curator/retry"
)

// AtomicSettings are the counter and double barrier rows' settings
// (curatorbench -atomic).
type AtomicSettings struct {
	// Clients is how many clients (sessions) contend for the counter and
	// how many members the double barrier has.
	Clients int `json:"clients"`
	// Increments is how many increments each client makes per run (after
	// a tenth as many unmeasured).
	Increments int `json:"increments"`
	// PerClient is how many goroutines (Java: threads) of each client
	// share its increments, each with a handle of its own; 0 or 1: one.
	PerClient int `json:"per_client,omitempty"`
	// Rounds is how many double-barrier rounds a run times (after one
	// unmeasured).
	BarrierRounds int `json:"barrier_rounds"`
}

// AtomicResult is one run of the counter and double barrier rows by one
// implementation at one round-trip time.
type AtomicResult struct {
	Impl  string  `json:"impl"`
	RTTMs float64 `json:"rtt_ms"`
	// IncrementsPerSec is increments that succeeded per second, all
	// clients together: ours atomic.Long.Increment, Curator's
	// DistributedAtomicLong.increment, each tried again until it succeeds,
	// with RetryNTimes(10, 1 ms) as the optimistic policy on both sides.
	IncrementsPerSec float64 `json:"increments_per_sec"`
	// RoundMs is the mean time of one double-barrier round (every member
	// enters and leaves), each round on a barrier path of its own.
	RoundMs float64 `json:"round_ms"`
	Error   string  `json:"error,omitempty"`
	// Rounds holds every round's figures when the row is the median of
	// several rounds.
	RoundsIncrements []float64 `json:"rounds_increments_per_sec,omitempty"`
	RoundsRoundMs    []float64 `json:"rounds_round_ms,omitempty"`
}

// AtomicTable is the counter and double barrier rows at one round-trip
// time.
type AtomicTable struct {
	RTTMs         float64        `json:"rtt_ms"`
	MeasuredRTTMs float64        `json:"measured_rtt_ms"`
	LoadAvg       string         `json:"load_avg,omitempty"`
	Rows          []AtomicResult `json:"rows"`
}

// AtomicReport is what -atomic measured: its settings and a table per
// round-trip time.
type AtomicReport struct {
	Settings AtomicSettings `json:"settings"`
	Tables   []AtomicTable  `json:"tables"`
}

// ErrAtomicSettings is returned by CheckAtomicSettings.
var ErrAtomicSettings = errors.New("-atomic-clients, -atomic-increments and -atomic-rounds must be positive (-atomic-goroutines not negative)")

// CheckAtomicSettings refuses counts below one.
func CheckAtomicSettings(s AtomicSettings) error {
	if s.Clients < 1 || s.Increments < 1 || s.BarrierRounds < 1 || s.PerClient < 0 {
		return ErrAtomicSettings
	}
	return nil
}

// counterPolicy is the optimistic retry policy of both sides' counters:
// Curator's RetryNTimes(10, 1 ms).
var counterPolicy = retry.NTimes(10, time.Millisecond)

// RunAtomicRounds runs the counter and double barrier rows through
// servers, ours and, when curator is set, Curator's, rounds times
// interleaved, and returns the table of the medians. The paths are under
// /curatorbench.
func RunAtomicRounds(ctx context.Context, servers string, s AtomicSettings, rounds int, rtt, measured time.Duration,
	curator bool, logf func(string, ...any)) (AtomicTable, error) {
	t := AtomicTable{RTTMs: ms(rtt), MeasuredRTTMs: ms(measured), LoadAvg: LoadAvg()}
	var all []AtomicResult
	for round := range rounds {
		if rounds > 1 {
			logf("atomic, RTT %v: round %d of %d", rtt, round+1, rounds)
		}
		runs := []func(context.Context, string, string, AtomicSettings) (AtomicResult, error){RunOurAtomic}
		if curator {
			runs = append(runs, RunCuratorAtomic)
		}
		for _, run := range runs {
			base := fmt.Sprintf("/curatorbench/atomic-%d", time.Now().UnixNano())
			r, err := run(ctx, servers, base, s)
			r.RTTMs = ms(rtt)
			if err != nil {
				r.Error = err.Error()
				logf("atomic %s, RTT %v: FAILED: %v", r.Impl, rtt, firstLine(err.Error()))
			} else {
				logf("atomic %s, RTT %v: %.0f increments/s (%d clients x %d), double-barrier round %.2f ms (%d members)",
					r.Impl, rtt, r.IncrementsPerSec, s.Clients, max(s.PerClient, 1), r.RoundMs, s.Clients)
			}
			all = append(all, r)
			if err := ctx.Err(); err != nil {
				t.Rows = MedianAtomic(all)
				return t, err
			}
		}
	}
	t.Rows = MedianAtomic(all)
	return t, nil
}

// RunOurAtomic measures recipes/atomic and recipes/barrier under base:
// s.Clients clients each incrementing one atomic.Long, then s.Clients
// members going through the double-barrier rounds. The counter is read
// back: a value other than the increments made fails the run.
func RunOurAtomic(ctx context.Context, servers, base string, s AtomicSettings) (AtomicResult, error) {
	r := AtomicResult{Impl: ImplOurs}
	cs := make([]*framework.Client, s.Clients)
	defer func() {
		for _, c := range cs {
			if c != nil {
				c.Close()
			}
		}
	}()
	for i := range cs {
		c, err := Connect(ctx, servers)
		if err != nil {
			return r, err
		}
		cs[i] = c
	}
	counter := base + "/counter"
	warm := max(s.Increments/10, 1)
	if err := ourIncrements(ctx, cs, counter, warm, s.PerClient); err != nil {
		return r, err
	}
	t0 := time.Now()
	if err := ourIncrements(ctx, cs, counter, s.Increments, s.PerClient); err != nil {
		return r, err
	}
	r.IncrementsPerSec = float64(s.Clients*s.Increments) / time.Since(t0).Seconds()
	got, err := atomic.NewLong(cs[0], counter).Get(ctx)
	if err != nil {
		return r, err
	}
	if want := int64(s.Clients * (s.Increments + warm)); got != want {
		return r, fmt.Errorf("counter %d after %d increments", got, want)
	}
	if r.RoundMs, err = ourBarrierRounds(ctx, cs, base+"/barrier", s.BarrierRounds); err != nil {
		return r, err
	}
	return r, nil
}

// ourIncrements has every client increment path n times, by perClient
// goroutines with a handle each, each increment tried again until it
// succeeds.
func ourIncrements(ctx context.Context, cs []*framework.Client, path string, n, perClient int) error {
	perClient = max(perClient, 1)
	g, gctx := errgroup.WithContext(ctx)
	for _, c := range cs {
		for j := range perClient {
			mine := n / perClient
			if j < n%perClient {
				mine++
			}
			l := atomic.NewLong(c, path, atomic.WithRetryPolicy(counterPolicy))
			g.Go(func() error {
				defer l.Close(context.WithoutCancel(gctx))
				for range mine {
					for {
						res, err := l.Increment(gctx)
						if err != nil {
							return err
						}
						if res.Succeeded {
							break
						}
					}
				}
				return nil
			})
		}
	}
	return g.Wait()
}

// RunCuratorAtomic measures Curator 5.4's DistributedAtomicLong and
// DistributedDoubleBarrier the same way, in CountersBench.java: a JVM for
// the increments, then one for the rounds.
func RunCuratorAtomic(ctx context.Context, servers, base string, s AtomicSettings) (AtomicResult, error) {
	r := AtomicResult{Impl: ImplCurator}
	cfg := javabench.CountersConfig{ConnectString: servers, Path: base + "/counter", Clients: s.Clients, N: s.Increments,
		Phase: "increment", PerClient: s.PerClient}
	j, err := javabench.RunCounters(ctx, cfg)
	if err != nil {
		return r, err
	}
	if want := int64(s.Clients * (s.Increments + max(s.Increments/10, 1))); j.Final != want {
		return r, fmt.Errorf("the counter of Curator's side reads %d after %d increments", j.Final, want)
	}
	r.IncrementsPerSec = j.IncrementsPerSec
	cfg.Path, cfg.N, cfg.Phase = base+"/barrier", s.BarrierRounds, "barrier"
	if j, err = javabench.RunCounters(ctx, cfg); err != nil {
		return r, err
	}
	r.RoundMs = j.RoundMs
	return r, nil
}

// MedianAtomic merges rounds: for each implementation and round-trip
// time, the median increment rate and the median round time (each of its
// own round).
func MedianAtomic(rows []AtomicResult) []AtomicResult {
	type key struct {
		impl string
		rtt  float64
	}
	var order []key
	groups := map[key][]AtomicResult{}
	for _, r := range rows {
		k := key{r.Impl, r.RTTMs}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	var out []AtomicResult
	for _, k := range order {
		var inc, round []float64
		for _, r := range groups[k] {
			if r.Error == "" {
				inc = append(inc, r.IncrementsPerSec)
				round = append(round, r.RoundMs)
			}
		}
		if len(inc) == 0 {
			out = append(out, groups[k][0])
			continue
		}
		m := AtomicResult{Impl: k.impl, RTTMs: k.rtt, IncrementsPerSec: atomicMedian(inc), RoundMs: atomicMedian(round)}
		if len(inc) > 1 {
			m.RoundsIncrements, m.RoundsRoundMs = inc, round
		}
		out = append(out, m)
	}
	return out
}

// atomicMedian is the lower median of xs.
func atomicMedian(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// WriteAtomic prints the counter and double barrier tables.
func WriteAtomic(w io.Writer, rounds int, rep *AtomicReport) {
	if rep == nil {
		return
	}
	s := rep.Settings
	fmt.Fprintf(w, "# atomic counter and double barrier: %d interleaved rounds, each cell the median of the rounds\n", rounds)
	fmt.Fprintf(w, "# increments/s = increments that succeeded per second, %d clients (sessions) contending on one counter, %d increments each (by %d goroutines or threads per client, a handle each) after a tenth as many unmeasured;\n",
		s.Clients, s.Increments, max(s.PerClient, 1))
	fmt.Fprintln(w, "#   each increment tried again until it succeeds, RetryNTimes(10, 1 ms) as the optimistic policy, no promotion; the counter is read back")
	fmt.Fprintf(w, "# round ms = mean time of one double-barrier round (%d members, one session each, enter then leave), %d rounds after one unmeasured, each on a barrier of its own\n",
		s.Clients, s.BarrierRounds)
	for _, t := range rep.Tables {
		fmt.Fprintln(w)
		rtt := "0 (direct)"
		if t.RTTMs > 0 {
			rtt = time.Duration(t.RTTMs * float64(time.Millisecond)).String()
		}
		fmt.Fprintf(w, "## atomic counter and double barrier, RTT %s (an exists takes %.3f ms)\n", rtt, t.MeasuredRTTMs)
		if t.LoadAvg != "" {
			fmt.Fprintf(w, "# load average at the start: %s\n", t.LoadAvg)
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "impl | increments/s | vs Curator | round ms | vs Curator")
		var cur *AtomicResult
		for i := range t.Rows {
			if t.Rows[i].Impl == ImplCurator && t.Rows[i].Error == "" {
				cur = &t.Rows[i]
			}
		}
		for _, r := range t.Rows {
			if r.Error != "" {
				fmt.Fprintf(w, "%s | FAILED: %s\n", r.Impl, firstLine(r.Error))
				continue
			}
			vsInc, vsRound := "-", "-"
			if r.Impl == ImplOurs && cur != nil && cur.IncrementsPerSec > 0 && cur.RoundMs > 0 {
				vsInc = fmt.Sprintf("%.2fx", r.IncrementsPerSec/cur.IncrementsPerSec)
				vsRound = fmt.Sprintf("%.2fx", r.RoundMs/cur.RoundMs)
			}
			fmt.Fprintf(w, "%s | %.0f | %s | %.2f | %s\n", r.Impl, r.IncrementsPerSec, vsInc, r.RoundMs, vsRound)
		}
	}
}
