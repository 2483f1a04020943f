package chaos

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/atomic"
)

// ViolationCounter: the atomic counter's value on the server is not the
// number of increments acknowledged (plus, at most, those whose outcome
// the client could not know): an update lost or counted twice.
const ViolationCounter = "counter-mismatch"

// counterPath is a workload's atomic counter.
func counterPath(workload string) string { return Root + "/" + workload + "/counter" }

// CounterStats sums up the counter workload: each client increments its
// workload's atomic.Long (recipes/atomic, Curator's DistributedAtomicLong)
// in a loop through the faults; at the end the value on the server is
// checked against what the clients were told.
type CounterStats struct {
	Acked      map[string]int   // increments acknowledged (Add returned nil), by workload
	NotApplied map[string]int   // Add said ErrNotApplied: certainly not counted
	Unknown    map[string]int   // any other error: counted or not (a reply lost, the session gone)
	Value      map[string]int64 // the counter on the server at the end
}

// counterRunner runs the counter workload.
type counterRunner struct {
	mu   sync.Mutex
	st   CounterStats
	logf func(string, ...any)
}

func newCounterRunner(logf func(string, ...any)) *counterRunner {
	return &counterRunner{logf: logf, st: CounterStats{Acked: map[string]int{}, NotApplied: map[string]int{},
		Unknown: map[string]int{}, Value: map[string]int64{}}}
}

// run increments, on c, the counter of workload until ctx ends. Each Add
// has a deadline of its own (a few session timeouts), so a fault never
// stops the loop for good.
func (r *counterRunner) run(ctx context.Context, c *framework.Client, workload string, st time.Duration) {
	n := atomic.NewLong(c, counterPath(workload))
	for ctx.Err() == nil {
		actx, cancel := context.WithTimeout(ctx, 3*st)
		_, err := n.Add(actx, 1)
		cancel()
		r.mu.Lock()
		switch {
		case err == nil:
			r.st.Acked[workload]++
		case errors.Is(err, atomic.ErrNotApplied):
			r.st.NotApplied[workload]++
		default:
			// A deadline, a lost reply, a lost session: the write may
			// have been applied.
			r.st.Unknown[workload]++
		}
		r.mu.Unlock()
		// A pause between increments keeps the counters from crowding
		// out the lock workloads; after an error, a longer one.
		pause := 5 * time.Millisecond
		if err != nil && !errors.Is(err, atomic.ErrNotApplied) {
			pause = 20 * time.Millisecond
		}
		sleep(ctx, pause)
	}
}

// check reads every workload's counter on the server (the workers have
// stopped, the faults are healed) and returns the stats and a violation
// per counter whose value is outside [acked, acked+unknown].
func (r *counterRunner) check(ctx context.Context, observer *framework.Client, start time.Time) (CounterStats, []Violation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var vs []Violation
	for _, wl := range Workloads {
		v, err := atomic.NewLong(observer, counterPath(wl)).Get(ctx)
		r.st.Value[wl] = v
		acked, unknown := int64(r.st.Acked[wl]), int64(r.st.Unknown[wl])
		switch {
		case err != nil:
			vs = append(vs, Violation{Kind: ViolationCounter, Workload: wl, At: time.Since(start),
				Detail: fmt.Sprintf("cannot read the counter: %v", err)})
		case v < acked:
			vs = append(vs, Violation{Kind: ViolationCounter, Workload: wl, At: time.Since(start),
				Detail: fmt.Sprintf("counter %d < %d increments acknowledged: updates lost", v, acked)})
		case v > acked+unknown:
			vs = append(vs, Violation{Kind: ViolationCounter, Workload: wl, At: time.Since(start),
				Detail: fmt.Sprintf("counter %d > %d acknowledged + %d unknown: updates counted twice", v, acked, unknown)})
		}
		r.logf("counter %s: %d on the server; %d acknowledged, %d unknown, %d not applied", wl, v, acked, unknown, r.st.NotApplied[wl])
	}
	return r.st, vs
}

// writeCounterBarrier adds the counter and double-barrier lines to the
// report.
func (r Report) writeCounterBarrier(b *strings.Builder) {
	c := r.Counter
	for _, wl := range Workloads {
		fmt.Fprintf(b, "  counter %-9s %d on the server; acknowledged %d, unknown %d, not applied %d\n",
			wl+":", c.Value[wl], c.Acked[wl], c.Unknown[wl], c.NotApplied[wl])
	}
	d := r.Barrier
	fmt.Fprintf(b, "  double barrier:    passes %s; rounds %s, all members %s\n",
		formatMap(d.Passes, Workloads), formatMap(d.Rounds, Workloads), formatMap(d.FullRounds, Workloads))
	fmt.Fprintf(b, "    failures:        enter %s; lost while in %s; leave %s; worst Leave past its deadline %v\n",
		formatMap(d.EnterFails, Workloads), formatMap(d.Lost, Workloads), formatMap(d.LeaveFails, Workloads), d.WorstLeave)
	fmt.Fprintf(b, "    leaves judged:   %s (no member of the round left behind); members cut in Leave %d\n",
		formatMap(d.LeavesJudged, Workloads), d.CutLeaves)
}
