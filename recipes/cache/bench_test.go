package cache_test

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/cache"
	"github.com/gocurator/curator/zktest"
)

var (
	benchNodes = flag.Int("cache.bench.nodes", 10_000, "nodes in BenchmarkLoad's tree (rounded to whole groups of 1,010)")
	benchData  = flag.Int("cache.bench.data", 32, "bytes of data per node in BenchmarkLoad's tree")
)

// benchTree creates a tree of mixed depth under root: groups of 10
// inner nodes with 100 leaves each (1,010 nodes a group), every node with
// size bytes of data, and returns its paths, parents first.
func benchTree(b *testing.B, ctx context.Context, c *framework.Client, root string, nodes, size int) []string {
	data := make([]byte, size)
	for i := range data {
		data[i] = byte('a' + i%26)
	}
	if _, err := c.Create(ctx, root, data, framework.CreatingParents()); err != nil {
		b.Fatal(err)
	}
	var paths []string
	for g := 0; g < max(nodes/1010, 1); g++ {
		a := fmt.Sprintf("%s/g%04d", root, g)
		paths = append(paths, a)
		for j := 0; j < 9; j++ {
			m := fmt.Sprintf("%s/m%d", a, j)
			paths = append(paths, m)
			for k := 0; k < 100; k++ {
				paths = append(paths, fmt.Sprintf("%s/leaf%03d", m, k))
			}
		}
		for k := 0; k < 100; k++ {
			paths = append(paths, fmt.Sprintf("%s/leaf%03d", a, k))
		}
	}
	for len(paths) > 0 {
		n := min(2000, len(paths))
		ops := make([]framework.Op, n)
		for i, p := range paths[:n] {
			ops[i] = framework.CreateOp(p, data, framework.Persistent)
		}
		if _, err := c.Multi(ctx, ops...); err != nil {
			b.Fatal(err)
		}
		paths = paths[n:]
	}
	return paths
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkLoad loads a tree of -cache.bench.nodes nodes (default 10,000,
// 32 bytes of data each) into a cache, and reports the heap the loaded
// cache retains per node (live heap after a collection, cache loaded,
// less before Start: the cache's maps, paths, Stats and data, and its
// watch) and the load time per node, to set beside the JVM's retained
// size per node of Curator's CuratorCache (the bench tool in cmd/ does
// that, same run). Run it alone:
//
//	go test -run '^$' -bench BenchmarkLoad -benchtime 3x ./recipes/cache
func BenchmarkLoad(b *testing.B) {
	ns := testkit.Unique(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := testkit.Connect(b, zkAddr, ns)
	benchTree(b, ctx, c, "/bench", *benchNodes, *benchData)
	b.Cleanup(func() {
		if err := c.Delete(context.Background(), "/bench", framework.DeletingChildren()); err != nil {
			b.Error(err)
		}
	})
	var heap, nodes, elapsed float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		before := liveHeap()
		b.StartTimer()
		start := time.Now()
		ch := cache.New(c, "/bench")
		if err := ch.Start(ctx); err != nil {
			b.Fatal(err)
		}
		elapsed += float64(time.Since(start).Nanoseconds())
		b.StopTimer()
		after := liveHeap()
		n := float64(ch.Len())
		heap += (float64(after) - float64(before)) / n
		nodes += n
		runtime.KeepAlive(ch)
		_ = ch.Close()
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(heap/float64(b.N), "bytes/node")
	b.ReportMetric(elapsed/nodes, "ns/node")
	b.ReportMetric(nodes/float64(b.N), "nodes")
}

// BenchmarkFollow measures how fast a loaded cache takes in changes: each
// round sets every one of 2,000 nodes (in transactions of 500, so that
// the writes are not the bottleneck) and waits on Synced; events/s is
// changes over the time from the first write to Synced's return.
func BenchmarkFollow(b *testing.B) {
	ns := testkit.Unique(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := testkit.Connect(b, zkAddr, ns)
	w := testkit.Connect(b, zkAddr, ns)
	const n = 2000
	paths := make([]string, n)
	for i := range paths {
		paths[i] = fmt.Sprintf("/follow/n%04d", i)
	}
	if _, err := w.Create(ctx, "/follow", nil); err != nil {
		b.Fatal(err)
	}
	createMany(b, ctx, w, paths, 1000)
	b.Cleanup(func() {
		if err := w.Delete(context.Background(), "/follow", framework.DeletingChildren()); err != nil {
			b.Error(err)
		}
	})
	ch := cache.New(c, "/follow")
	defer ch.Close()
	if err := ch.Start(ctx); err != nil {
		b.Fatal(err)
	}
	var elapsed time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		data := []byte(fmt.Sprint(i))
		for j := 0; j < n; j += 500 {
			ops := make([]framework.Op, 0, 500)
			for _, p := range paths[j:min(j+500, n)] {
				ops = append(ops, framework.SetOp(p, data, -1))
			}
			if _, err := w.Multi(ctx, ops...); err != nil {
				b.Fatal(err)
			}
		}
		if err := ch.Synced(ctx); err != nil {
			b.Fatal(err)
		}
		elapsed += time.Since(start)
		if got, _ := ch.Get(paths[n-1]); string(got.Data) != string(data) {
			b.Fatalf("after Synced: %q, want %q", got.Data, data)
		}
	}
	b.ReportMetric(float64(n*b.N)/elapsed.Seconds(), "events/s")
}

// BenchmarkLoadDefaults compares the load settings a default could take,
// through a 2 ms round trip (the fault proxy's delay, one proxy a server)
// to the package's server and to a 3-node ensemble: reads in flight 64
// and 256 over one session, the default (sessions opened once a tree
// proves large), and four sessions from the start. It reports nodes/s
// and the connections the load opened besides the client's. The
// ensemble takes a while to start; run it alone:
//
//	go test -run '^$' -bench BenchmarkLoadDefaults -benchtime 3x ./recipes/cache
func BenchmarkLoadDefaults(b *testing.B) {
	ens, err := zktest.LaunchEnsemble(3)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ens.Close() })
	var ensemble []string
	for _, s := range ens.Servers() {
		ensemble = append(ensemble, s.Addr())
	}
	settings := []struct {
		name string
		opts []cache.Option
	}{
		{"1x64", []cache.Option{cache.WithLoadSessions(1)}},
		{"1x256", []cache.Option{cache.WithLoadSessions(1), cache.WithReadsInFlight(256)}},
		{"default", nil},
		{"4x64", []cache.Option{cache.WithLoadSessions(4)}},
	}
	for _, target := range []struct {
		name  string
		addrs []string
	}{{"standalone", []string{zkAddr}}, {"ensemble", ensemble}} {
		var proxied []string
		for _, a := range target.addrs {
			p := zktest.NewProxy(b, a)
			p.SetDelay(time.Millisecond)
			proxied = append(proxied, p.Addr())
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		c, err := framework.Connect(ctx, strings.Join(proxied, ","), framework.WithNamespace(testkit.Unique(b)))
		if err != nil {
			b.Fatal(err)
		}
		benchTree(b, ctx, c, "/bench", *benchNodes, *benchData)
		for _, s := range settings {
			b.Run(target.name+"/"+s.name, func(b *testing.B) {
				var nodes, secs, opened float64
				for range b.N {
					start := time.Now()
					ch := cache.New(c, "/bench", s.opts...)
					if err := ch.Start(ctx); err != nil {
						b.Fatal(err)
					}
					secs += time.Since(start).Seconds()
					nodes += float64(ch.Len())
					opened += float64(max(cache.LoadSessionsUsed(ch)-1, 0))
					_ = ch.Close()
				}
				b.ReportMetric(nodes/secs, "nodes/s")
				b.ReportMetric(opened/float64(b.N), "conns/load")
			})
		}
		if err := c.Delete(ctx, "/bench", framework.DeletingChildren()); err != nil {
			b.Error(err)
		}
		_ = c.Close()
	}
}
