// Command rwlock shows the distributed read/write lock: readers share it, a
// writer waits for them and keeps later readers out, a writer downgrades to
// a reader without letting a queued writer in, and a reader asking for the
// write lock gets ErrUpgradeNotSupported instead of a deadlock.
//
//	go run ./examples/rwlock -zk 127.0.0.1:2181
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
	"github.com/gocurator/curator/recipes/rwlock"
)

var start = time.Now()

func say(format string, args ...any) {
	fmt.Printf("%6.3fs  %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
}

func main() {
	zkAddr := flag.String("zk", "127.0.0.1:2181", "ZooKeeper connect string")
	path := flag.String("path", "/examples/rwlock", "lock path")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *zkAddr, *path); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, zkAddr, path string) error {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := framework.Connect(cctx, zkAddr)
	if err != nil {
		return err
	}
	defer c.Close()

	// 1. Two readers overlap; a writer queued behind them waits; a reader
	// arriving after the writer waits for the writer.
	say("== readers share, a writer waits, later readers queue behind it")
	var wg sync.WaitGroup
	hold := func(who string, l *rwlock.Lock, delay, d time.Duration) {
		defer wg.Done()
		time.Sleep(delay)
		say("%s: asking", who)
		if err := l.Acquire(ctx); err != nil {
			say("%s: %v", who, err)
			return
		}
		say("%s: HOLDS (token %d)", who, l.FencingToken())
		select {
		case <-l.Done():
			say("%s: lost: %v", who, l.Err())
		case <-time.After(d):
		}
		if err := l.Release(ctx); err != nil {
			say("%s: release: %v", who, err)
		}
		say("%s: released", who)
	}
	// Each RWLock is an owner; separate participants need separate RWLocks.
	wg.Add(4)
	go hold("reader 1", rwlock.New(c, path).ReadLock(), 0, 600*time.Millisecond)
	go hold("reader 2", rwlock.New(c, path).ReadLock(), 50*time.Millisecond, 600*time.Millisecond)
	go hold("writer  ", rwlock.New(c, path).WriteLock(), 200*time.Millisecond, 300*time.Millisecond)
	go hold("reader 3", rwlock.New(c, path).ReadLock(), 400*time.Millisecond, 100*time.Millisecond)
	wg.Wait()

	// 2. Downgrade: holding the write lock, take the read lock, then release
	// the write lock. A writer queued meanwhile still waits for our read
	// hold (CURATOR-621).
	say("== downgrade")
	rw := rwlock.New(c, path)
	w, r := rw.WriteLock(), rw.ReadLock()
	if err := w.Acquire(ctx); err != nil {
		return err
	}
	say("owner: holds the write lock")
	other := rwlock.New(c, path).WriteLock()
	otherDone := make(chan error, 1)
	go func() { otherDone <- other.Acquire(ctx) }()
	time.Sleep(200 * time.Millisecond) // let the other writer queue
	if err := r.Acquire(ctx); err != nil {
		return err
	}
	say("owner: took the read lock at once (node %s)", name(r.Node()))
	if err := w.Release(ctx); err != nil {
		return err
	}
	say("owner: released the write lock; now a reader")
	select {
	case err := <-otherDone:
		say("other writer got in: %v (unexpected)", err)
	case <-time.After(500 * time.Millisecond):
		say("other writer: still waiting, as it should")
	}

	// 3. Upgrade: holding only the read lock, ask for the write lock.
	err = w.Acquire(ctx)
	say("owner: WriteLock().Acquire while reading: ErrUpgradeNotSupported=%v", errors.Is(err, rwlock.ErrUpgradeNotSupported))

	if err := r.Release(ctx); err != nil {
		return err
	}
	say("owner: released the read lock")
	if err := <-otherDone; err != nil {
		return err
	}
	say("other writer: HOLDS (token %d)", other.FencingToken())
	return other.Release(ctx)
}

func name(p string) string {
	_, n := framework.SplitPath(p)
	return n
}
