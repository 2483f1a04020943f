package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gocurator/curator/cmd/internal/bench"
)

// cacheTree is a tree of -cache-trees built on the server.
type cacheTree struct {
	bench.CacheTree
	root string
}

// buildCacheTrees builds every tree of -cache-trees on the server itself
// (no proxy: building is not measured). It returns those it built, also on
// failure, for deleteCacheTrees.
func buildCacheTrees(ctx context.Context, f flags, srv *server, logf func(string, ...any)) ([]cacheTree, error) {
	var out []cacheTree
	for _, t := range f.cacheTrees {
		ct := cacheTree{CacheTree: t, root: fmt.Sprintf("/curatorbench/cache-%d-%d", t.Nodes, time.Now().UnixNano())}
		out = append(out, ct)
		start := time.Now()
		logf("cache: building %s at %s", t.Label(), ct.root)
		if err := bench.BuildCacheTree(ctx, srv.addr, ct.root, t); err != nil {
			return out, fmt.Errorf("cache: build %s: %w", t.Label(), err)
		}
		logf("cache: built %s in %v", t.Label(), time.Since(start).Round(time.Millisecond))
	}
	return out, nil
}

func deleteCacheTrees(ctx context.Context, srv *server, trees []cacheTree, logf func(string, ...any)) {
	for _, t := range trees {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Minute)
		if err := bench.DeleteTree(dctx, srv.addr, t.root); err != nil {
			logf("cache: delete %s: %v", t.root, err)
		}
		cancel()
	}
}

// runCacheLoads loads every tree with our cache and, when it can run, with
// Curator's CuratorCache, the rounds interleaved, and adds the median rows
// to rep.
func runCacheLoads(ctx context.Context, f flags, srv *server, servers string, rtt, measured time.Duration, curatorOK bool,
	rep *bench.Report, logf func(string, ...any)) error {
	t := bench.CacheTable{RTTMs: ms(rtt), MeasuredRTTMs: ms(measured)}
	var all []bench.CacheLoadResult
	defer func() {
		t.Rows = bench.MedianCacheLoads(all)
		rep.Cache = append(rep.Cache, t)
	}()
	for round := range f.rounds {
		if f.rounds > 1 {
			logf("cache, RTT %v: round %d of %d", rtt, round+1, f.rounds)
		}
		for _, tree := range srv.cacheTrees {
			loads := []func(context.Context, string, string, bench.CacheTree) (bench.CacheLoadResult, error){
				bench.LoadOurCache, bench.LoadOurCacheOver(1), bench.LoadRawReads}
			if f.cacheSess > 1 {
				loads = append(loads, bench.LoadOurCacheOver(f.cacheSess))
			}
			if curatorOK {
				loads = append(loads, bench.LoadCuratorCache)
			}
			for _, load := range loads {
				cpu0 := bench.ProcessCPUOf(srv.pid())
				r, err := load(ctx, servers, tree.root, tree.CacheTree)
				if cpu1 := bench.ProcessCPUOf(srv.pid()); cpu0 >= 0 && cpu1 >= 0 && r.Nodes > 0 {
					r.ServerCPUUsPerNode = float64((cpu1 - cpu0).Microseconds()) / float64(r.Nodes)
				}
				r.Tree, r.RTTMs = tree.Label(), ms(rtt)
				if r.Note != "" {
					logf("cache %s, %s, RTT %v: %d of %d nodes; its log: %s", r.Impl, r.Tree, rtt, r.Nodes, tree.Nodes+1, r.Note)
				}
				if err != nil {
					logf("cache %s, %s, RTT %v: FAILED: %v", r.Impl, r.Tree, rtt, firstLine(err.Error()))
				} else {
					logf("cache %s, %s, RTT %v: %d nodes in %.3f s, %.0f heap bytes per node, server CPU %.0f µs per node",
						r.Impl, r.Tree, rtt, r.Nodes, r.Seconds, r.HeapPerNode, r.ServerCPUUsPerNode)
				}
				all = append(all, r)
				if err := ctx.Err(); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// printCache prints the cache load tables.
func printCache(w io.Writer, rep *bench.Report) {
	if len(rep.Settings.CacheTrees) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "# cache initial load: %d interleaved rounds, each row the round with the median time;\n", rep.Settings.Rounds)
	fmt.Fprintln(w, "# time = Start until loaded (Curator: start() until the initialized event); heap/node = live heap after a GC with the cache loaded, less before;")
	fmt.Fprintln(w, "# server CPU/node = the server JVM's CPU time during the load over the nodes; go-zookeeper raw = the same reads with nothing kept, the floor of a go-zookeeper cache over one session")
	for _, t := range rep.Cache {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "## cache initial load, RTT %s (an exists takes %.3f ms)\n\n", rttLabel(t.RTTMs), t.MeasuredRTTMs)
		cells := [][]string{{"tree", "impl", "nodes", "time s", "nodes/s", "heap bytes/node", "server CPU µs/node", "vs Curator time"}}
		for _, r := range t.Rows {
			if r.Error != "" {
				cells = append(cells, []string{r.Tree, r.Impl, "FAILED: " + firstLine(r.Error)})
				continue
			}
			vs := "-"
			if r.Impl != bench.ImplCurator {
				for _, c := range t.Rows {
					switch {
					case c.Impl != bench.ImplCurator || c.Tree != r.Tree || c.Error != "" || r.Seconds <= 0:
					case c.Nodes < r.Nodes:
						// A cache that reported itself initialized with
						// nodes missing is no time to compare with.
						vs = fmt.Sprintf("Curator cached %d of %d", c.Nodes, r.Nodes)
					default:
						vs = fmt.Sprintf("%.2fx faster", c.Seconds/r.Seconds)
					}
				}
			}
			heap, cpu := "-", "-"
			if r.Impl != bench.ImplRaw {
				heap = fmt.Sprintf("%.0f", r.HeapPerNode)
			}
			if r.ServerCPUUsPerNode > 0 {
				cpu = fmt.Sprintf("%.0f", r.ServerCPUUsPerNode)
			}
			cells = append(cells, []string{r.Tree, r.Impl, fmt.Sprint(r.Nodes), fmt.Sprintf("%.3f", r.Seconds),
				fmt.Sprintf("%.0f", float64(r.Nodes)/max(r.Seconds, 1e-9)), heap, cpu, vs})
		}
		for _, row := range cells {
			fmt.Fprintln(w, strings.Join(row, " | "))
		}
		for _, r := range t.Rows {
			if r.Note != "" {
				fmt.Fprintf(w, "\n%s, %s: %d nodes; its log: %s\n", r.Impl, r.Tree, r.Nodes, r.Note)
			}
		}
	}
}
