// Command mutex shows the distributed mutex: several handles take turns
// (in queue order, with growing fencing tokens), a handle re-acquires
// (reentrancy per handle), TryAcquire does not wait, and an acquire that
// times out leaves no node behind.
//
//	go run ./examples/mutex -zk 127.0.0.1:2181
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
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/mutex"
)

func main() {
	zkAddr := flag.String("zk", "127.0.0.1:2181", "ZooKeeper connect string")
	path := flag.String("path", "/examples/mutex", "lock path")
	handles := flag.Int("handles", 3, "handles competing for the lock")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *zkAddr, *path, *handles); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, zkAddr, path string, handles int) error {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := framework.Connect(cctx, zkAddr)
	if err != nil {
		return err
	}
	defer c.Close()

	// 1. Handles take turns. Each handle is an owner: two handles exclude
	// each other even on one client, as two processes would.
	fmt.Printf("== %d handles, 2 turns each\n", handles)
	var wg sync.WaitGroup
	for i := range handles {
		m := mutex.New(c, path, mutex.WithData(fmt.Appendf(nil, "handle-%d", i)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 2 {
				if err := m.Acquire(ctx); err != nil {
					fmt.Printf("handle %d: %v\n", i, err)
					return
				}
				ps, _ := m.Participants(ctx)
				fmt.Printf("handle %d holds %s, fencing token %d, %d waiting\n",
					i, name(m.Node()), m.FencingToken(), len(ps)-1)
				select {
				case <-m.Done(): // lost with the connection
					fmt.Printf("handle %d lost the lock: %v\n", i, m.Err())
				case <-time.After(200 * time.Millisecond): // the work
				}
				if err := m.Release(ctx); err != nil {
					fmt.Printf("handle %d: release: %v\n", i, err)
				}
			}
		}()
	}
	wg.Wait()

	// 2. Reentrancy, TryAcquire, and a timed-out acquire.
	fmt.Println("== reentrancy, TryAcquire, timeout")
	a, b := mutex.New(c, path), mutex.New(c, path)
	if err := a.Acquire(ctx); err != nil {
		return err
	}
	if err := a.Acquire(ctx); err != nil { // same handle: counted, at once
		return err
	}
	fmt.Printf("a holds %s twice\n", name(a.Node()))

	ok, err := b.TryAcquire(ctx)
	fmt.Printf("b.TryAcquire while a holds: %v, %v\n", ok, err)

	tctx, tcancel := context.WithTimeout(ctx, 300*time.Millisecond)
	err = b.Acquire(tctx)
	tcancel()
	fmt.Printf("b.Acquire with a 300ms deadline: DeadlineExceeded=%v\n", errors.Is(err, context.DeadlineExceeded))
	ps, err := a.Participants(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("participants after the timeout: %d (only a's node; b left none)\n", len(ps))

	for range 2 {
		if err := a.Release(ctx); err != nil {
			return err
		}
	}
	err = a.Release(ctx)
	fmt.Printf("a released twice; a third Release: ErrNotHeld=%v\n", errors.Is(err, mutex.ErrNotHeld))
	return nil
}

func name(p string) string {
	_, n := framework.SplitPath(p)
	return n
}
