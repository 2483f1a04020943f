package semaphore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/semaphore"
)

// Waiters, served and timed out, leave no watch on the server once every
// lease is back (pitfall 9: watches set with exists on missing nodes never
// fire). It counts the data watches of the test's own sessions (wchc), so
// parallel tests on the package's server cannot disturb it.
func TestNoWatchesLeftBehind(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			ns := testkit.Unique(t)
			ctx := testkit.Ctx(t)
			checker := testkit.Connect(t, zkAddr, ns)
			clients := []*framework.Client{checker}
			newSem := func() *semaphore.Semaphore {
				c := testkit.Connect(t, zkAddr, ns)
				clients = append(clients, c)
				return semaphore.New(c, semPath, 1, m.opts...)
			}
			holder, err := newSem().Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// One channel for all: waiters are served in queue order, which
			// need not be the order they were started in.
			const n = 3
			results := make(chan result, n)
			for range n {
				s := newSem()
				go func() {
					l, err := s.Acquire(ctx)
					results <- result{l, err}
				}()
			}
			if m.v2 {
				waitCount(t, checker, semPath+"/locks", 3)
			} else {
				waitCount(t, checker, semPath, 4)
			}
			dctx, cancel := context.WithTimeout(ctx, shortWait)
			defer cancel()
			if _, err := newSem().Acquire(dctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("timed-out waiter: %v", err)
			}
			mustRelease(t, holder)
			for range n {
				r := await(t, results)
				if r.err != nil {
					t.Fatal(r.err)
				}
				mustRelease(t, r.lease)
			}
			waitEmpty(t, checker, m.leaseDir(semPath))
			if n := testkit.WatchCount(t, zkAddr, clients...); n != 0 {
				t.Fatalf("server holds %d watches of the test's %d sessions with every lease back, want 0", n, len(clients))
			}
		})
	}
}
