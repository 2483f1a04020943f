package semaphore_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/locking"
	"github.com/gocurator/curator/recipes/semaphore"
)

// 10 clients, max 3, 2,000 acquisitions in each mode: never more than 3
// holders, checked in-process, by ephemeral marker nodes each holder makes
// while it holds, and on the semaphore's own nodes; every client gets
// leases.
func TestNeverMoreThanMaxHolders(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			const clients, max, total = 10, 3, 2000
			ns := testkit.Unique(t)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			var (
				holders, grants atomic.Int32
				perClient       [clients]atomic.Int32
				wg              sync.WaitGroup
			)
			errc := make(chan error, 4*clients)
			report := func(err error) {
				select {
				case errc <- err:
				default:
				}
				cancel()
			}
			start := time.Now()
			for i := range clients {
				c := testkit.Connect(t, zkAddr, ns)
				s := semaphore.New(c, semPath, max, m.opts...)
				wg.Add(1)
				go func() {
					defer wg.Done()
					for grants.Load() < total && ctx.Err() == nil {
						l, err := s.Acquire(ctx)
						if err != nil {
							report(fmt.Errorf("client %d: %w", i, err))
							return
						}
						grants.Add(1)
						perClient[i].Add(1)
						if h := holders.Add(1); h > max {
							report(fmt.Errorf("%d holders in process", h))
						}
						if err := checkServerSide(ctx, c, m, l, max); err != nil {
							report(fmt.Errorf("client %d: %w", i, err))
						}
						holders.Add(-1)
						if err := l.Release(ctx); err != nil {
							report(fmt.Errorf("client %d: release: %w", i, err))
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errc)
			for err := range errc {
				t.Fatal(err)
			}
			took := time.Since(start)
			t.Logf("%s: %d acquisitions by %d clients, max %d, in %v (%.0f/s)",
				m.name, grants.Load(), clients, max, took.Round(time.Millisecond), float64(grants.Load())/took.Seconds())
			for i := range perClient {
				if perClient[i].Load() == 0 {
					t.Errorf("client %d never got a lease", i)
				}
			}
			checker := testkit.Connect(t, zkAddr, ns)
			waitEmpty(t, checker, m.leaseDir(semPath))
			if m.v2 {
				waitEmpty(t, checker, semPath+"/locks")
			}
		})
	}
}

// checkServerSide runs while l is held: it makes a marker node, counts the
// markers (each holder has one), and checks l's node among the
// semaphore's nodes.
func checkServerSide(ctx context.Context, c *framework.Client, m mode, l *semaphore.Lease, max int) error {
	marker, err := c.Create(ctx, "/markers/m-", []byte{},
		framework.WithMode(framework.EphemeralSequential), framework.CreatingParentContainers())
	if err != nil {
		return err
	}
	defer c.Delete(ctx, marker)
	markers, _, err := c.Children(ctx, "/markers")
	if err != nil {
		return err
	}
	if len(markers) > max {
		return fmt.Errorf("%d holders' markers on the server: %v", len(markers), markers)
	}
	nodes, _, err := c.Children(ctx, m.leaseDir(semPath))
	if err != nil {
		return err
	}
	_, own := framework.SplitPath(l.Node())
	if m.v2 {
		// The holders and at most one waiter, the gate holder.
		if len(nodes) > max+1 {
			return fmt.Errorf("%d lease nodes (max %d + the gate holder's): %v", len(nodes), max, nodes)
		}
		return nil
	}
	sorted := locking.SortChildren(nodes, func(s string) (int32, bool) { return locking.Sequence(s, "lock-") })
	for i, n := range sorted {
		if n == own {
			if i >= max {
				return fmt.Errorf("holder's node %s is at index %d of %v", own, i, sorted)
			}
			return nil
		}
	}
	return fmt.Errorf("holder's node %s is not on the server: %v", own, sorted)
}
