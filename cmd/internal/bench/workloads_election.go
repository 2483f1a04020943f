package bench

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/gocurator/curator/recipes/leader"
)

// ElectionHold is how long the Election workload's leader leads before it
// resigns: long enough for the other candidate, which campaigns again at
// once after its own term, to have created its node and set its watch
// (Curator's LeaderLatch takes three round trips for that: create, list,
// watch), so that every measured fail-over is a hand-over to a waiting
// candidate.
const ElectionHold = 20 * time.Millisecond

func init() {
	register(Workload{Name: Election, Impl: ImplOurs, New: electionCycle})
}

// resignClock is the run's shared clock of resignations: the instant, as
// time since its base, at which the last leader called Resign. The next
// leader's fail-over is measured from it. Runs are sequential, so one
// clock serves them all; a run's first term (nobody resigned yet) keeps
// its Campaign's own latency.
type resignClock struct {
	base time.Time
	last atomic.Int64 // nanoseconds since base; 0: nobody resigned yet
}

var electionClock = resignClock{base: time.Now()}

func (c *resignClock) stamp() { c.last.Store(int64(time.Since(c.base))) }

// since returns the time from the last resignation to at, or 0 if none.
func (c *resignClock) since(at time.Time) time.Duration {
	last := c.last.Load()
	if last == 0 {
		return 0
	}
	return at.Sub(c.base) - time.Duration(last)
}

// electionCycle is one participant of our election (latch layout) in its
// own session: Acquire campaigns, Release resigns; Latency is the
// fail-over to this participant's term.
func electionCycle(ctx context.Context, w *Worker) (Locker, error) {
	c, err := w.Client(ctx)
	if err != nil {
		return Locker{}, err
	}
	if w.ID == 0 {
		electionClock.last.Store(0) // a new run: nobody resigned in it yet
	}
	e := leader.New(c, w.Path)
	var (
		term     *leader.Term
		failover time.Duration
	)
	return Locker{
		Acquire: func(ctx context.Context) error {
			t, err := e.Campaign(ctx)
			if err != nil {
				return err
			}
			failover = electionClock.since(time.Now())
			term = t
			return nil
		},
		Latency: func() time.Duration { return failover },
		Release: func(ctx context.Context) error {
			electionClock.stamp()
			return term.Resign(ctx)
		},
	}, nil
}
