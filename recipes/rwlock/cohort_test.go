package rwlock_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/rwlock"
)

// Write locks with local hand-over on two clients and plain readers on a
// third: a writer never overlaps a reader or another writer. Each side
// leaves evidence for its whole hold (a writer's /w, a reader's node under
// /r) and checks for the other side's after making its own, so any overlap
// is seen by one of the two. Writers hand over locally (far fewer write
// nodes than write holds), and nothing is left behind.
func TestWriteLocalHandoverExcludesReadersAndWriters(t *testing.T) {
	ns := testkit.Unique(t)
	const path = "/locks/cohort"
	const writes = 300
	var (
		wrote, read atomic.Int32
		stop        atomic.Bool
		mu          sync.Mutex
		tokens      = map[int64]int{}
		wg, writers sync.WaitGroup
	)
	errc := make(chan error, 64)
	for i := 0; i < 2; i++ {
		c := testkit.Connect(t, zkAddr, ns)
		for j := 0; j < 4; j++ {
			w := rwlock.New(c, path, rwlock.WithLocalHandover(8)).WriteLock()
			writers.Add(1)
			go func() {
				defer writers.Done()
				ctx := context.Background()
				for wrote.Load() < writes {
					if err := w.Acquire(ctx); err != nil {
						errc <- err
						return
					}
					wrote.Add(1)
					if _, err := w.FencedMulti(ctx, framework.CreateOp("/w", nil, framework.Ephemeral)); err != nil {
						errc <- fmt.Errorf("writer marker: %w", err)
					}
					if kids, _, err := c.Children(ctx, "/r"); err != nil && !errors.Is(err, zk.ErrNoNode) {
						errc <- err
					} else if len(kids) > 0 {
						errc <- fmt.Errorf("a writer holds while %d readers hold", len(kids))
					}
					mu.Lock()
					tokens[w.FencingToken()]++
					mu.Unlock()
					if err := c.Delete(ctx, "/w"); err != nil {
						errc <- err
					}
					if err := w.Release(ctx); err != nil {
						errc <- err
						return
					}
				}
			}()
		}
	}
	rc := testkit.Connect(t, zkAddr, ns)
	for j := 0; j < 3; j++ {
		r := rwlock.New(rc, path).ReadLock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			for !stop.Load() {
				if err := r.Acquire(ctx); err != nil {
					errc <- err
					return
				}
				read.Add(1)
				mine, err := rc.Create(ctx, "/r/x-", nil, framework.WithMode(framework.EphemeralSequential), framework.CreatingParents())
				if err != nil {
					errc <- err
				}
				if st, err := rc.Exists(ctx, "/w"); err != nil || st != nil {
					errc <- fmt.Errorf("a reader holds while a writer holds (%v)", err)
				}
				if err := rc.Delete(ctx, mine); err != nil {
					errc <- err
				}
				if err := r.Release(ctx); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	// Readers stop once the writers are through.
	writers.Wait()
	stop.Store(true)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	if len(tokens)*2 > int(wrote.Load()) {
		t.Errorf("%d write nodes for %d write holds: local hand-over barely happened", len(tokens), wrote.Load())
	}
	t.Logf("%d write holds on %d write nodes, %d read holds", wrote.Load(), len(tokens), read.Load())
	waitChildren(t, rc, path, 0)
}

// A write holder that downgraded (holds its read lock too) does not hand
// the write node to a local writer: that writer would hold while the
// downgraded reader does. The local writer gets a fresh node, behind the
// read node, and holds once the read lock is released.
func TestWriteLocalHandoverNotWhileDowngraded(t *testing.T) {
	ns := testkit.Unique(t)
	const path = "/locks/downgrade"
	c := testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
	a := rwlock.New(c, path, rwlock.WithLocalHandover(4))
	b := rwlock.New(c, path, rwlock.WithLocalHandover(4))
	if err := a.WriteLock().Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	token := a.WriteLock().FencingToken()
	bw := acquireAsync(ctx, b.WriteLock())
	testkit.Eventually(t, "b's writer queued locally", func() bool { return a.WriteLock().LocalWaiters() == 1 })
	if err := a.ReadLock().Acquire(ctx); err != nil { // downgrade
		t.Fatal(err)
	}
	if err := a.WriteLock().Release(ctx); err != nil {
		t.Fatal(err)
	}
	// b's writer queues with a fresh node behind a's read node.
	waitChildren(t, c, path, 2) // b's fresh write node behind a's read node
	pending(t, bw, "b's write lock while a holds its read lock")
	if err := a.ReadLock().Release(ctx); err != nil {
		t.Fatal(err)
	}
	mustAcquired(t, bw, "b's write lock")
	if got := b.WriteLock().FencingToken(); got <= token {
		t.Fatalf("b's write token %d, want a fresh node's (> %d)", got, token)
	}
	if err := b.WriteLock().Release(ctx); err != nil {
		t.Fatal(err)
	}
	waitChildren(t, c, path, 0)
}
