package framework

import (
	"context"
	"slices"
	"testing"
	"time"
)

// BenchmarkWatchDelivery measures a change on the server to its event at a
// recursive Watcher: another client sets a node below the watched root
// and the time until the Watcher delivers it is recorded; p50 and p99 are
// reported. It times the Watcher alone, on loopback; the comparison with
// Curator 5.4's persistent watch (watchers().add()), TreeCache and
// CuratorCache at RTT 0.5 and 2 ms, with events/s and server watches per
// subscription, is curatorbench -watch (docs/benchmarks.md). Not part of
// the regular test run.
func BenchmarkWatchDelivery(b *testing.B) {
	c := connectNS(b, newNamespace(b))
	other := connectNS(b, c.Namespace())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := other.Create(ctx, "/bench/n", nil, CreatingParents()); err != nil {
		b.Fatal(err)
	}
	w, err := c.Watch(ctx, "/bench", Recursive())
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := other.Set(ctx, "/bench/n", []byte{byte(i)}, -1); err != nil {
			b.Fatal(err)
		}
		for ev := range w.Events() {
			if ev.Type == WatchDataChanged && ev.Path == "/bench/n" {
				break
			}
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	}
}
