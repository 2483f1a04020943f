// Command semaphore shows the distributed counting semaphore: at most max
// leases at once, TryAcquire and AcquireN, a maximum taken from a
// SharedCount and raised at run time, and the semaphore mutex.
//
//	go run ./examples/semaphore -zk 127.0.0.1:2181
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/recipes/shared"
)

var start = time.Now()

func say(format string, args ...any) {
	fmt.Printf("%6.3fs  %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
}

func main() {
	zkAddr := flag.String("zk", "127.0.0.1:2181", "ZooKeeper connect string")
	path := flag.String("path", "/examples/semaphore", "semaphore path")
	maxLeases := flag.Int("max", 2, "leases")
	workers := flag.Int("workers", 5, "goroutines competing for leases")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *zkAddr, *path, *maxLeases, *workers); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, zkAddr, path string, max, workers int) error {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := framework.Connect(cctx, zkAddr)
	if err != nil {
		return err
	}
	defer c.Close()

	// 1. Workers share max leases. The semaphore is not reentrant and holds
	// no state between calls: one value serves every goroutine.
	say("== %d workers, %d leases", workers, max)
	sem := semaphore.New(c, path, max)
	var running, peak atomic.Int32
	var wg sync.WaitGroup
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lease, err := sem.Acquire(ctx)
			if err != nil {
				say("worker %d: %v", i, err)
				return
			}
			n := running.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			say("worker %d: lease %s (token %d), %d running", i, name(lease.Node()), lease.FencingToken(), n)
			select {
			case <-lease.Done():
				say("worker %d: lease lost: %v", i, lease.Err())
			case <-time.After(300 * time.Millisecond):
			}
			running.Add(-1)
			if err := lease.Release(ctx); err != nil {
				say("worker %d: release: %v", i, err)
			}
		}()
	}
	wg.Wait()
	say("at most %d ran at once (max %d)", peak.Load(), max)

	// 2. TryAcquire never waits; AcquireN is all or nothing.
	say("== TryAcquire and AcquireN")
	leases, err := sem.AcquireN(ctx, max)
	if err != nil {
		return err
	}
	say("AcquireN(%d): holding all %d leases", max, len(leases))
	if _, ok, err := sem.TryAcquire(ctx); ok || err != nil {
		return fmt.Errorf("TryAcquire while full = %v, %v; want false, nil", ok, err)
	}
	say("TryAcquire while full: false (busy is not an error)")
	tctx, tcancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = sem.AcquireN(tctx, 1)
	tcancel()
	say("AcquireN(1) with a 300ms deadline while full: DeadlineExceeded=%v", errors.Is(err, context.DeadlineExceeded))
	for _, l := range leases {
		if err := l.Release(ctx); err != nil {
			return err
		}
	}
	ps, err := sem.Participants(ctx)
	if err != nil {
		return err
	}
	say("released; lease nodes left: %d", len(ps))

	// 3. The maximum from a SharedCount, raised while acquirers wait.
	say("== max leases from a SharedCount")
	count := shared.NewCount(c, path+"-max", 1)
	if err := count.Set(ctx, 1); err != nil {
		return err
	}
	if err := count.Start(ctx); err != nil {
		return err
	}
	defer count.Close()
	dyn := semaphore.New(c, path+"-dynamic", 0, semaphore.WithMaxLeasesFrom(count))
	var held []*semaphore.Lease
	var mu sync.Mutex
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := dyn.Acquire(ctx)
			if err != nil {
				say("acquirer %d: %v", i, err)
				return
			}
			say("acquirer %d: got a lease (max now %d)", i, dyn.MaxLeases())
			mu.Lock()
			held = append(held, l)
			mu.Unlock()
		}()
	}
	time.Sleep(500 * time.Millisecond)
	v, err := count.GetVersioned(ctx)
	if err != nil {
		return err
	}
	ok, err := count.TrySet(ctx, v, 3)
	say("raised the count from %d to 3: %v %v", v.Value, ok, err)
	wg.Wait()
	for _, l := range held {
		_ = l.Release(ctx)
	}

	// 4. The semaphore mutex (Curator's InterProcessSemaphoreMutex): not
	// reentrant, and any goroutine may release it.
	say("== semaphore mutex")
	m := semaphore.NewMutex(c, path+"-mutex")
	if err := m.Acquire(ctx); err != nil {
		return err
	}
	ok, _ = m.TryAcquire(ctx)
	say("held; TryAcquire on the same handle: %v (not reentrant)", ok)
	released := make(chan error)
	go func() { released <- m.Release(ctx) }() // another goroutine releases
	if err := <-released; err != nil {
		return err
	}
	say("released from another goroutine")
	return nil
}

func name(p string) string {
	_, n := framework.SplitPath(p)
	return n
}
