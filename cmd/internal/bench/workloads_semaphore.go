package bench

import (
	"context"

	"github.com/gocurator/curator/recipes/semaphore"
)

func init() {
	register(Workload{Name: Semaphore, Impl: ImplOurs, New: semaphoreCycle()})
	register(Workload{Name: SemaphoreV2, Impl: ImplOurs, New: semaphoreCycle(semaphore.CuratorV2())})
}

// semaphoreCycle takes one lease of a semaphore with the run's max leases:
// the lock loop's layout (V1), or Curator's V2 layout with CuratorV2.
func semaphoreCycle(opts ...semaphore.Option) func(context.Context, *Worker) (Locker, error) {
	return func(ctx context.Context, w *Worker) (Locker, error) {
		c, err := w.Client(ctx)
		if err != nil {
			return Locker{}, err
		}
		s := semaphore.New(c, w.Path, w.MaxLeases, opts...)
		var lease *semaphore.Lease
		return Locker{
			Acquire: func(ctx context.Context) (err error) {
				lease, err = s.Acquire(ctx)
				return err
			},
			Release: func(ctx context.Context) error { return lease.Release(ctx) },
		}, nil
	}
}
