package rwlock_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/rwlock"
)

// BenchmarkReadLock: 8 clients acquiring and releasing the read lock, which
// they share.
func BenchmarkReadLock(b *testing.B) { benchLock(b, false) }

// BenchmarkWriteLock: 8 clients contending for the write lock.
func BenchmarkWriteLock(b *testing.B) { benchLock(b, true) }

// benchLock runs b.N acquire/release cycles spread over 8 clients (one
// session each) and reports the throughput and the acquire latency.
func benchLock(b *testing.B, write bool) {
	const clients = 8
	ns := testkit.Unique(b)
	// No deadline: a long -benchtime makes long runs; go test -timeout
	// bounds a hang.
	ctx := context.Background()
	locks := make([]*rwlock.Lock, clients)
	for i := range locks {
		rw := rwlock.New(testkit.Connect(b, zkAddr, ns), "/lock")
		locks[i] = rw.ReadLock()
		if write {
			locks[i] = rw.WriteLock()
		}
	}
	var (
		next      atomic.Int64
		mu        sync.Mutex
		latencies = make([]time.Duration, 0, b.N)
		wg        sync.WaitGroup
		failed    atomic.Value
	)
	b.ResetTimer()
	start := time.Now()
	for _, k := range locks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for next.Add(1) <= int64(b.N) {
				t0 := time.Now()
				if err := k.Acquire(ctx); err != nil {
					failed.Store(err)
					return
				}
				mine = append(mine, time.Since(t0))
				if err := k.Release(ctx); err != nil {
					failed.Store(err)
					return
				}
			}
			mu.Lock()
			latencies = append(latencies, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	slices.Sort(latencies)
	pct := func(p float64) float64 {
		return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "ops/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}
