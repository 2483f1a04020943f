package semaphore_test

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/semaphore"
)

// 8 clients contend for 2 leases, each acquiring and releasing in a closed
// loop: acquisitions per second, and the acquire latency (from the call to
// the lease, waiting included) at p50 and p99.
func BenchmarkAcquireRelease(b *testing.B) {
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			const clients, max = 8, 2
			ns := testkit.Unique(b)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			sems := make([]*semaphore.Semaphore, clients)
			for i := range sems {
				sems[i] = semaphore.New(testkit.Connect(b, zkAddr, ns), semPath, max, m.opts...)
			}
			var (
				next    atomic.Int64
				wg      sync.WaitGroup
				mu      sync.Mutex
				latency = make([]time.Duration, 0, b.N)
			)
			b.ResetTimer()
			start := time.Now()
			for _, s := range sems {
				wg.Add(1)
				go func() {
					defer wg.Done()
					mine := make([]time.Duration, 0, b.N/clients+1)
					defer func() {
						mu.Lock()
						latency = append(latency, mine...)
						mu.Unlock()
					}()
					for next.Add(1) <= int64(b.N) {
						t0 := time.Now()
						l, err := s.Acquire(ctx)
						if err != nil {
							b.Error(err)
							return
						}
						mine = append(mine, time.Since(t0))
						if err := l.Release(ctx); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			if len(latency) == 0 {
				return
			}
			sort.Slice(latency, func(i, j int) bool { return latency[i] < latency[j] })
			pct := func(p float64) float64 {
				return float64(latency[int(p*float64(len(latency)-1))].Microseconds()) / 1000
			}
			b.ReportMetric(float64(len(latency))/elapsed.Seconds(), "acq/s")
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
		})
	}
}
