package queue_test

import (
	"context"
	"encoding/binary"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/queue"
	"github.com/gocurator/curator/zktest"
)

// BenchmarkProduceConsume runs 4 producers and 4 consumers, each with a
// session of its own, through a 2 ms round trip (the fault proxy's
// delay), without and with a lock path, and reports items/s and the
// put-to-consume latency's p50 and p99 (the put's time travels in the
// item). Curator's figures beside these come from curatorbench -queue;
// this one is for comparing changes to the consumer. Run it alone:
//
//	go test -run '^$' -bench BenchmarkProduceConsume -benchtime 2000x ./recipes/queue
func BenchmarkProduceConsume(b *testing.B) {
	for _, mode := range []struct {
		name string
		lock bool
	}{{"plain", false}, {"locked", true}} {
		b.Run(mode.name, func(b *testing.B) { benchProduceConsume(b, mode.lock, 4, 4) })
	}
}

func benchProduceConsume(b *testing.B, lock bool, producers, consumers int) {
	proxy := zktest.NewProxy(b, zkAddr)
	proxy.SetDelay(time.Millisecond)
	ns := testkit.Unique(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var opts []queue.Option
	if lock {
		opts = append(opts, queue.WithLockPath("/locks"))
	}
	client := func() *framework.Client {
		c, err := framework.Connect(ctx, proxy.Addr(), framework.WithNamespace(ns))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = c.Close() })
		return c
	}
	n := b.N
	var (
		mu        sync.Mutex
		latencies = make([]time.Duration, 0, n)
		got       atomic.Int64
		all       = make(chan struct{})
	)
	cctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range consumers {
		q := queue.New(client(), "/q", opts...)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = q.Consume(cctx, func(_ context.Context, it queue.Item) error {
				sent := time.Unix(0, int64(binary.BigEndian.Uint64(it.Data)))
				mu.Lock()
				latencies = append(latencies, time.Since(sent))
				mu.Unlock()
				if got.Add(1) == int64(n) {
					close(all)
				}
				return nil
			})
		}()
	}
	producer := make([]*queue.Queue, producers)
	for i := range producer {
		producer[i] = queue.New(client(), "/q", opts...)
	}
	b.ResetTimer()
	start := time.Now()
	var pg sync.WaitGroup
	for i, q := range producer {
		pg.Add(1)
		go func() {
			defer pg.Done()
			for j := i; j < n; j += producers {
				var item [8]byte
				binary.BigEndian.PutUint64(item[:], uint64(time.Now().UnixNano()))
				if err := q.Put(ctx, item[:]); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	pg.Wait()
	select {
	case <-all:
	case <-ctx.Done():
		b.Fatalf("consumed %d of %d items", got.Load(), n)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	stop()
	wg.Wait()
	slices.Sort(latencies)
	b.ReportMetric(float64(n)/elapsed.Seconds(), "items/s")
	b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds())/1000, "p99-ms")
	if got.Load() != int64(n) {
		b.Fatalf("consumed %d of %d", got.Load(), n)
	}
}
