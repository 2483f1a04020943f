package bench

import (
	"context"

	"github.com/gocurator/curator/recipes/mutex"
)

// CohortMax is the local hand-over bound of the Cohort workload.
const CohortMax = 16

func init() {
	register(Workload{Name: Cohort, Impl: ImplOurs, New: cohortCycle})
	// go-zookeeper's lock has no local hand-over: one participant per
	// goroutine on the session's connection.
	register(Workload{Name: Cohort, Impl: ImplZKLock, Peer: true, New: zkLockCycle})
	register(Workload{Name: CohortTokens, Impl: ImplOurs, New: cohortTokensCycle})
	// The same Lockers, a process per session (Config.Procs).
	register(Workload{Name: CohortProcs, Impl: ImplOurs, New: cohortCycle})
	register(Workload{Name: CohortProcs, Impl: ImplZKLock, Peer: true, New: zkLockCycle})
}

// cohortTokensCycle is cohortCycle with per-holder tokens.
func cohortTokensCycle(ctx context.Context, w *Worker) (Locker, error) {
	c, err := w.Client(ctx)
	if err != nil {
		return Locker{}, err
	}
	m := mutex.New(c, w.Path, mutex.WithLocalHandover(CohortMax), mutex.WithPerHolderTokens())
	return Locker{Acquire: m.Acquire, Release: m.Release}, nil
}

// cohortCycle is our mutex with WithLocalHandover(CohortMax): the workers
// of a session share one node.
func cohortCycle(ctx context.Context, w *Worker) (Locker, error) {
	c, err := w.Client(ctx)
	if err != nil {
		return Locker{}, err
	}
	m := mutex.New(c, w.Path, mutex.WithLocalHandover(CohortMax))
	return Locker{Acquire: m.Acquire, Release: m.Release}, nil
}
