package bench

import (
	"context"

	"github.com/gocurator/curator/recipes/rwlock"
)

func init() {
	register(Workload{Name: Read, Impl: ImplOurs, New: readCycle})
	register(Workload{Name: Write, Impl: ImplOurs, New: writeCycle})
}

// readCycle takes our read lock; all workers read, nobody writes.
func readCycle(ctx context.Context, w *Worker) (Locker, error) {
	c, err := w.Client(ctx)
	if err != nil {
		return Locker{}, err
	}
	l := rwlock.New(c, w.Path).ReadLock()
	return Locker{Acquire: l.Acquire, Release: l.Release}, nil
}

// writeCycle takes our write lock; all workers write.
func writeCycle(ctx context.Context, w *Worker) (Locker, error) {
	c, err := w.Client(ctx)
	if err != nil {
		return Locker{}, err
	}
	l := rwlock.New(c, w.Path).WriteLock()
	return Locker{Acquire: l.Acquire, Release: l.Release}, nil
}
