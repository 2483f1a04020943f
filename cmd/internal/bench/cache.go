package bench

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/cmd/internal/javabench"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/cache"
)

// cacheSubscriber is our cache as a watch-delivery subscriber: the time of
// a change is when its Changed event reaches the listener.
type cacheSubscriber struct {
	c        *framework.Client
	cache    *cache.Cache
	cancel   func()
	counting atomic.Bool
	reset    atomic.Bool
	times    chan int64
	ends     chan [3]int64
	first, n int64 // the listener's own
}

func startCacheSubscriber(ctx context.Context, servers, path string) (*cacheSubscriber, error) {
	c, err := Connect(ctx, servers)
	if err != nil {
		return nil, err
	}
	s := &cacheSubscriber{c: c, cache: cache.New(c, path), times: make(chan int64, 1024), ends: make(chan [3]int64, 1)}
	s.cancel = s.cache.Listen(s.event)
	if err := s.cache.Start(ctx); err != nil {
		s.cancel()
		c.Close()
		return nil, err
	}
	return s, nil
}

func (s *cacheSubscriber) event(ev cache.Event) {
	now := time.Now().UnixNano()
	if s.reset.Swap(false) {
		s.first, s.n = 0, 0
	}
	switch ev.Type {
	case cache.Changed:
		if !s.counting.Load() {
			select {
			case s.times <- now:
			default:
			}
			return
		}
		if s.n == 0 {
			s.first = now
		}
		s.n++
	case cache.Created:
		if _, name := framework.SplitPath(ev.Path); s.counting.Load() && strings.HasPrefix(name, "end-") {
			select {
			case s.ends <- [3]int64{s.first, now, s.n}:
			default:
			}
		}
	}
}

func (s *cacheSubscriber) session() int64 { return s.c.SessionID() }
func (s *cacheSubscriber) latency() error {
	s.counting.Store(false)
	return nil
}

func (s *cacheSubscriber) next(ctx context.Context) (int64, error) {
	t := time.NewTimer(eventTimeout)
	defer t.Stop()
	select {
	case at := <-s.times:
		return at, nil
	case <-t.C:
		return 0, fmt.Errorf("no cache event within %v", eventTimeout)
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

func (s *cacheSubscriber) burst() error {
	s.reset.Store(true)
	s.counting.Store(true)
	return nil
}

func (s *cacheSubscriber) burstResult(ctx context.Context) (int64, int64, int64, error) {
	t := time.NewTimer(5 * time.Minute)
	defer t.Stop()
	select {
	case r := <-s.ends:
		return r[0], r[1], r[2], nil
	case <-t.C:
		return 0, 0, 0, errors.New("no end of burst within 5m")
	case <-ctx.Done():
		return 0, 0, 0, ctx.Err()
	}
}

func (s *cacheSubscriber) close() {
	s.cancel()
	_ = s.cache.Close()
	s.c.Close()
}

// CacheTree is a tree the cache load rows load: Nodes nodes below its
// root, at mixed depths (1 to 3, as the watch benchmark's tree) or, Flat,
// all children of one parent.
type CacheTree struct {
	Nodes int
	Flat  bool
}

// Label is "10000 nodes, mixed depth" or "200000 children of one parent".
func (t CacheTree) Label() string {
	if t.Flat {
		return fmt.Sprintf("%d children of one parent", t.Nodes)
	}
	return fmt.Sprintf("%d nodes, mixed depth", t.Nodes)
}

// ParseCacheTrees parses a comma list of node counts, each with an
// optional ":flat" (all children of one parent); k and M multiply by 1,000
// and 1,000,000.
func ParseCacheTrees(list string) ([]CacheTree, error) {
	var out []CacheTree
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		num, flat := strings.CutSuffix(s, ":flat")
		mult := 1
		switch {
		case strings.HasSuffix(num, "k"):
			num, mult = strings.TrimSuffix(num, "k"), 1000
		case strings.HasSuffix(num, "M"):
			num, mult = strings.TrimSuffix(num, "M"), 1000000
		}
		var n int
		if _, err := fmt.Sscanf(num, "%d", &n); err != nil || n < 1 || fmt.Sprint(n) != num {
			return nil, fmt.Errorf("%q is not a tree size (10000, 10k, 200k:flat, ...)", s)
		}
		out = append(out, CacheTree{Nodes: n * mult, Flat: flat})
	}
	return out, nil
}

// BuildCacheTree creates t below root through servers (best the server
// itself: building is not measured), 64 requests in flight.
func BuildCacheTree(ctx context.Context, servers, root string, t CacheTree) error {
	if err := EnsurePath(ctx, servers, root); err != nil {
		return err
	}
	conn, err := DialZK(ctx, servers)
	if err != nil {
		return err
	}
	defer conn.Close()
	if !t.Flat {
		// createTree adds root/n: one node fewer below it.
		return createTree(ctx, conn, root, t.Nodes-1)
	}
	data := []byte("cache-bench")
	return parallel(ctx, 64, t.Nodes, func(i int) error {
		p := fmt.Sprintf("%s/%06d", root, i)
		if _, err := conn.Create(p, data, 0, zk.WorldACL(zk.PermAll)); err != nil {
			return fmt.Errorf("create %s: %w", p, err)
		}
		return nil
	})
}

// CacheLoadResult is one initial load of a cache.
type CacheLoadResult struct {
	Impl  string  `json:"impl"`
	Tree  string  `json:"tree"`
	RTTMs float64 `json:"rtt_ms"`
	// Nodes is how many nodes the cache held after the load, its root
	// included.
	Nodes int `json:"nodes"`
	// Seconds is from Start (CuratorCache.start()) until the load was done
	// (Start's return; the initialized event).
	Seconds float64 `json:"seconds"`
	// HeapPerNode is the heap the loaded cache retains per node, in bytes:
	// live heap after a collection with the cache loaded, less before it
	// (Go: runtime.MemStats.HeapAlloc; Java: MemoryMXBean heap used).
	HeapPerNode float64 `json:"heap_bytes_per_node"`
	// ServerCPUUsPerNode is the CPU time the ZooKeeper server's JVM used
	// during the load, in microseconds per node (0: not known, as for a
	// server the benchmark did not start).
	ServerCPUUsPerNode float64 `json:"server_cpu_us_per_node,omitempty"`
	// Note is what the client logged as a problem when it loaded fewer
	// nodes than the tree has.
	Note  string `json:"note,omitempty"`
	Error string `json:"error,omitempty"`
	// RoundsSeconds holds every round's time when the row is the median
	// of several rounds.
	RoundsSeconds []float64 `json:"rounds_seconds,omitempty"`
}

// CacheTable is the cache load rows of one round-trip time.
type CacheTable struct {
	RTTMs         float64           `json:"rtt_ms"`
	MeasuredRTTMs float64           `json:"measured_rtt_ms"`
	Rows          []CacheLoadResult `json:"rows"`
}

// LoadOurCache loads a cache of root through servers with the default
// options and measures it (t, the tree, only for the signature shared
// with LoadCuratorCache).
func LoadOurCache(ctx context.Context, servers, root string, _ CacheTree) (CacheLoadResult, error) {
	return loadOurCache(ctx, servers, root, ImplOurs)
}

// LoadOurCacheOver is LoadOurCache with cache.WithLoadSessions(sessions),
// its rows named so.
func LoadOurCacheOver(sessions int) func(context.Context, string, string, CacheTree) (CacheLoadResult, error) {
	return func(ctx context.Context, servers, root string, _ CacheTree) (CacheLoadResult, error) {
		impl := fmt.Sprintf("%s, %d load sessions", ImplOurs, sessions)
		if sessions == 1 {
			impl = ImplOurs + ", 1 load session"
		}
		return loadOurCache(ctx, servers, root, impl, cache.WithLoadSessions(sessions))
	}
}

func loadOurCache(ctx context.Context, servers, root, impl string, opts ...cache.Option) (CacheLoadResult, error) {
	r := CacheLoadResult{Impl: impl}
	c, err := Connect(ctx, servers)
	if err != nil {
		r.Error = err.Error()
		return r, err
	}
	defer c.Close()
	h0 := liveHeap()
	cc := cache.New(c, root, opts...)
	t0 := time.Now()
	err = cc.Start(ctx)
	r.Seconds = time.Since(t0).Seconds()
	if err != nil {
		r.Error = err.Error()
		return r, err
	}
	r.Nodes = cc.Len()
	h1 := liveHeap()
	r.HeapPerNode = float64(int64(h1)-int64(h0)) / float64(max(r.Nodes, 1))
	runtime.KeepAlive(cc)
	_ = cc.Close()
	return r, nil
}

// LoadRawReads reads root's tree as a cache's load does, keeping nothing:
// raw go-zookeeper, rawReadsInFlight reads in flight, a getData per node
// and a getChildren where the node has children. Its time is the floor
// of a load by any cache on go-zookeeper, on this machine, through this
// proxy; HeapPerNode is not measured.
func LoadRawReads(ctx context.Context, servers, root string, _ CacheTree) (CacheLoadResult, error) {
	r := CacheLoadResult{Impl: ImplRaw}
	conn, err := DialZK(ctx, servers)
	if err != nil {
		r.Error = err.Error()
		return r, err
	}
	defer conn.Close()
	t0 := time.Now()
	r.Nodes, err = readTrees(ctx, conn, rawReadsInFlight, root)
	r.Seconds = time.Since(t0).Seconds()
	if err != nil {
		r.Error = err.Error()
	}
	return r, err
}

// rawReadsInFlight is LoadRawReads' bound, the cache's default.
const rawReadsInFlight = 64

// readTrees reads every node of the trees of roots (roots included) with
// workers goroutines and returns how many it read.
func readTrees(ctx context.Context, conn *zk.Conn, workers int, roots ...string) (int, error) {
	var (
		mu    sync.Mutex
		cond  = sync.NewCond(&mu)
		queue = append([]string(nil), roots...)
		busy  int
		read  int
		first error
		visit func(p string) ([]string, error)
	)
	visit = func(p string) ([]string, error) {
		_, st, err := conn.Get(p)
		if errors.Is(err, zk.ErrNoNode) {
			return nil, nil
		}
		if err != nil || st.NumChildren == 0 {
			return nil, err
		}
		names, _, err := conn.Children(p)
		if errors.Is(err, zk.ErrNoNode) {
			return nil, nil
		}
		kids := make([]string, len(names))
		for i, n := range names {
			kids[i] = framework.JoinPath(p, n)
		}
		return kids, err
	}
	work := func() {
		mu.Lock()
		defer mu.Unlock()
		for {
			for len(queue) == 0 && busy > 0 && first == nil {
				cond.Wait()
			}
			if len(queue) == 0 || first != nil {
				cond.Broadcast()
				return
			}
			p := queue[len(queue)-1]
			queue = queue[:len(queue)-1]
			busy++
			mu.Unlock()
			kids, err := visit(p)
			if err == nil {
				err = ctx.Err()
			}
			mu.Lock()
			busy--
			read++
			if err != nil && first == nil {
				first = fmt.Errorf("read %s: %w", p, err)
			}
			queue = append(queue, kids...)
			cond.Broadcast()
		}
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	wg.Wait()
	return read, first
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// MedianCacheLoads merges rounds: for each implementation, tree and
// round-trip time, the round with the median time.
func MedianCacheLoads(rows []CacheLoadResult) []CacheLoadResult {
	type key struct {
		impl, tree string
		rtt        float64
	}
	var order []key
	groups := map[key][]CacheLoadResult{}
	for _, r := range rows {
		k := key{r.Impl, r.Tree, r.RTTMs}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	var out []CacheLoadResult
	for _, k := range order {
		g := groups[k]
		var ok []CacheLoadResult
		var secs []float64
		for _, r := range g {
			if r.Error == "" {
				ok = append(ok, r)
				secs = append(secs, r.Seconds)
			}
		}
		if len(ok) == 0 {
			out = append(out, g[0])
			continue
		}
		sorted := append([]CacheLoadResult(nil), ok...)
		for i := 1; i < len(sorted); i++ {
			for j := i; j > 0 && sorted[j].Seconds < sorted[j-1].Seconds; j-- {
				sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
			}
		}
		m := sorted[(len(sorted)-1)/2]
		if len(ok) > 1 {
			m.RoundsSeconds = secs
		}
		out = append(out, m)
	}
	return out
}

// LoadCuratorCache loads a Curator CuratorCache of root, a tree of t,
// through servers, in WatchBench.java, and measures it. The JVM's heap
// is 512 MiB, or 2 KiB per node for trees past 256,000 nodes (the
// CuratorCache of a million nodes retains about 300 MB).
func LoadCuratorCache(ctx context.Context, servers, root string, t CacheTree) (CacheLoadResult, error) {
	r := CacheLoadResult{Impl: ImplCurator}
	w, err := javabench.StartWatch(ctx, javabench.WatchConfig{ConnectString: servers, Path: root, Mode: javabench.WatchLoad,
		HeapMB: max(512, t.Nodes*2/1024)})
	if err != nil {
		r.Error = err.Error()
		return r, err
	}
	defer w.Close()
	d, heap, n, err := w.Load()
	if err != nil {
		r.Error = err.Error()
		return r, err
	}
	r.Seconds, r.Nodes = d.Seconds(), n
	r.HeapPerNode = float64(heap) / float64(max(n, 1))
	if n < t.Nodes+1 {
		r.Note = logProblems(w.Log(), 3)
	}
	return r, nil
}

// logProblems returns the first n distinct WARN and ERROR lines of a
// JVM's log (slf4j-simple's format), each with the exception line after
// it if there is one, without their times, joined by " | ".
func logProblems(log string, n int) string {
	lines := strings.Split(log, "\n")
	var out []string
	for i, line := range lines {
		if len(out) == n {
			break
		}
		if !strings.Contains(line, " WARN ") && !strings.Contains(line, " ERROR ") {
			continue
		}
		// "12:00:00.000 [thread] LEVEL logger - message": the time goes.
		_, msg, _ := strings.Cut(strings.TrimSpace(line), " ")
		if i+1 < len(lines) {
			if next := strings.TrimSpace(lines[i+1]); next != "" && !strings.HasPrefix(next, "at ") && (next[0] < '0' || next[0] > '9') {
				msg += ": " + next
			}
		}
		if !slices.Contains(out, msg) {
			out = append(out, msg)
		}
	}
	return strings.Join(out, " | ")
}
