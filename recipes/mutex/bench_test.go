package mutex_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/zktest"
)

// The benchmarks start their server in the parent benchmark, which the
// testing package runs once, so that the sub-benchmark's repeated runs with
// growing b.N share it. cmd/curatorbench measures the same workloads with
// warm-up, peers and percentiles over fixed periods.

// benchClient connects a client to addr, closed when b ends.
func benchClient(b *testing.B, addr string) *framework.Client {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := framework.Connect(ctx, addr,
		framework.WithSessionTimeout(30*time.Second),
		framework.WithRetryPolicy(retry.ExponentialBackoff(100*time.Millisecond, 3)))
	if err != nil {
		b.Fatalf("connect %s: %v", addr, err)
	}
	b.Cleanup(func() { _ = c.Close() })
	return c
}

// ensureBenchPath creates path (persistent) so that no iteration pays for
// its parent containers or sees them reaped between iterations.
func ensureBenchPath(b *testing.B, c *framework.Client, path string) {
	b.Helper()
	_, err := c.Create(context.Background(), path, []byte{}, framework.CreatingParents())
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		b.Fatalf("create %s: %v", path, err)
	}
}

// BenchmarkUncontendedAcquireRelease: one handle acquiring and releasing a
// lock nobody else wants, next to the raw requests it cannot do without
// (create EPHEMERAL_SEQUENTIAL + getChildren + delete on go-zookeeper).
func BenchmarkUncontendedAcquireRelease(b *testing.B) {
	srv := zktest.StartServer(b)
	b.Run("mutex", func(b *testing.B) {
		c := benchClient(b, srv.ConnectString())
		ensureBenchPath(b, c, "/bench/uncontended-mutex")
		m := mutex.New(c, "/bench/uncontended-mutex")
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if err := m.Acquire(ctx); err != nil {
				b.Fatal(err)
			}
			if err := m.Release(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The same with a ctx that has a deadline, as most callers' have: each
	// request is then waited for on a goroutine that ctx can cut short.
	b.Run("mutex, ctx with deadline", func(b *testing.B) {
		c := benchClient(b, srv.ConnectString())
		ensureBenchPath(b, c, "/bench/uncontended-mutex-deadline")
		m := mutex.New(c, "/bench/uncontended-mutex-deadline")
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if err := m.Acquire(ctx); err != nil {
				b.Fatal(err)
			}
			if err := m.Release(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("raw", func(b *testing.B) {
		c := benchClient(b, srv.ConnectString())
		ensureBenchPath(b, c, "/bench/uncontended-raw")
		conn := c.Conn()
		acl := zk.WorldACL(zk.PermAll)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			node, err := conn.Create("/bench/uncontended-raw/lock-", []byte("127.0.0.1"), zk.FlagEphemeral|zk.FlagSequence, acl)
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := conn.Children("/bench/uncontended-raw"); err != nil {
				b.Fatal(err)
			}
			if err := conn.Delete(node, -1); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkContended8: 8 clients, one goroutine and handle each, loop
// acquire → release on one lock until b.N acquisitions are done. Reports
// acquisitions per second and the acquire latency (call until held).
func BenchmarkContended8(b *testing.B) {
	srv := zktest.StartServer(b)
	b.Run("clients=8", func(b *testing.B) { benchContended(b, srv.ConnectString(), 8) })
}

func benchContended(b *testing.B, addr string, clients int) {
	const path = "/bench/contended"
	handles := make([]*mutex.Mutex, clients)
	for i := range handles {
		c := benchClient(b, addr)
		if i == 0 {
			ensureBenchPath(b, c, path)
		}
		handles[i] = mutex.New(c, path)
	}
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		mu      sync.Mutex
		lat     = make([]time.Duration, 0, b.N)
		failure atomic.Pointer[error]
	)
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	for _, m := range handles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for next.Add(1) <= int64(b.N) && failure.Load() == nil {
				t0 := time.Now()
				err := m.Acquire(ctx)
				d := time.Since(t0)
				if err == nil {
					err = m.Release(ctx)
				}
				if err != nil {
					failure.CompareAndSwap(nil, &err)
					return
				}
				mine = append(mine, d)
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err := failure.Load(); err != nil {
		b.Fatal(*err)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "ops/s")
	b.ReportMetric(benchPercentile(lat, 0.50), "p50-ms")
	b.ReportMetric(benchPercentile(lat, 0.99), "p99-ms")
}

// benchPercentile is the nearest-rank percentile of sorted, in ms.
func benchPercentile(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	i = max(0, min(len(sorted)-1, i))
	return float64(sorted[i]) / float64(time.Millisecond)
}
