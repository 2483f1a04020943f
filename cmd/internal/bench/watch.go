package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/cmd/internal/javabench"
	"github.com/gocurator/curator/framework"
)

// The subscribers of the watch-delivery benchmark, in table order.
const (
	WatchOursRecursive    = "gocurator Watch, recursive"
	WatchOursNode         = "gocurator Watch, node"
	WatchOursCache        = "gocurator cache.Cache"
	WatchCuratorRecursive = "Curator watchers().add(), persistent recursive"
	WatchCuratorNode      = "Curator watchers().add(), persistent"
	WatchCuratorTreeCache = "Curator TreeCache"
	WatchCuratorCache     = "Curator CuratorCache"
)

// WatchSubscribers lists every subscriber, ours first.
var WatchSubscribers = []string{WatchOursRecursive, WatchOursNode, WatchOursCache, WatchCuratorRecursive, WatchCuratorNode,
	WatchCuratorTreeCache, WatchCuratorCache}

// IsCurator reports whether subscriber runs in Curator's JVM.
func IsCurator(subscriber string) bool { return strings.HasPrefix(subscriber, "Curator") }

// watchRecursive reports whether subscriber watches the whole tree (the
// others watch the written node alone).
func watchRecursive(subscriber string) bool {
	return subscriber != WatchOursNode && subscriber != WatchCuratorNode
}

// WatchConfig is one run of the watch-delivery benchmark: one subscriber
// on a tree of Tree nodes plus the written node, Samples timed writes and
// a burst of Burst writes.
type WatchConfig struct {
	// Servers is what the writer and the subscriber connect to: the
	// server, or a proxy in front of it.
	Servers string
	// Server is the server itself, where wchc and wchs go.
	Server string
	// Root is the run's subtree, created and deleted by the run.
	Root string
	// Tree is the number of other nodes in the watched subtree, at mixed
	// depths (1 to 3 below Root): a recursive subscriber watches them all.
	Tree int
	// Samples is the number of timed writes, after Samples/10 (at least 5)
	// unmeasured ones.
	Samples int
	// Burst is the number of writes of the events/s burst, made by Writers
	// goroutines on one writer session.
	Burst, Writers int
}

// WatchResult is one subscriber's row at one round-trip time.
type WatchResult struct {
	Subscriber string  `json:"subscriber"`
	RTTMs      float64 `json:"rtt_ms"`
	// TreeNodes is the number of nodes in the watched subtree, its root
	// and the written node included.
	TreeNodes int `json:"tree_nodes"`
	// Samples is the number of timed writes; the latencies are from the
	// writer's call to setData until the subscriber's callback (Go: the
	// event read from Events) saw the change, in milliseconds.
	Samples int     `json:"samples"`
	P50Ms   float64 `json:"p50_ms"`
	P90Ms   float64 `json:"p90_ms"`
	P99Ms   float64 `json:"p99_ms"`
	MaxMs   float64 `json:"max_ms"`
	// Burst is the number of setData writes of the burst, to one node as
	// fast as the writers can; Delivered the data-change events the
	// subscriber received for them (fewer when a slow consumer's events
	// were coalesced); ChangesPerSec is Burst over the time from the burst's
	// first write to the subscriber's sight of the end marker written after
	// the last; WriterPerSec is Burst over the time until the writers had
	// every reply: the server's pace, which a subscriber that keeps up
	// matches.
	Burst         int     `json:"burst"`
	Delivered     int64   `json:"delivered"`
	ChangesPerSec float64 `json:"changes_per_sec"`
	EventsPerSec  float64 `json:"events_per_sec"`
	WriterPerSec  float64 `json:"writer_per_sec"`
	// WatchedPaths is the paths the subscriber's session watches on the
	// server (wchc: data-table watches, one per persistent watch and one
	// per node for one-shot getData/exists watches; Curator's client adds
	// one on /zookeeper/config, its EnsembleTracker's); WatchEntries is
	// what the subscription added to the server's watch count (mntr
	// zk_watch_count: the data and the child table, where TreeCache has a
	// getData and a getChildren watch per node); WatchesLeft is what was
	// still there after the subscriber closed.
	WatchedPaths int `json:"watched_paths"`
	WatchEntries int `json:"watch_entries"`
	WatchesLeft  int `json:"watches_left"`
	// Rounds holds every round's p50, p99 and changes/s when the row is
	// the median of several rounds.
	RoundsP50Ms         []float64 `json:"rounds_p50_ms,omitempty"`
	RoundsP99Ms         []float64 `json:"rounds_p99_ms,omitempty"`
	RoundsChangesPerSec []float64 `json:"rounds_changes_per_sec,omitempty"`
	Error               string    `json:"error,omitempty"`
}

// WatchTable is the watch rows of one round-trip time.
type WatchTable struct {
	RTTMs         float64       `json:"rtt_ms"`
	MeasuredRTTMs float64       `json:"measured_rtt_ms"`
	LoadAvg       string        `json:"load_avg,omitempty"`
	Rows          []WatchResult `json:"rows"`
}

// subscriber is one implementation under test.
type subscriber interface {
	session() int64
	// latency switches to reporting data changes; next returns the
	// arrival time (Unix nanoseconds) of the next.
	latency() error
	next(ctx context.Context) (int64, error)
	// burst switches to counting data changes; burstResult waits for the
	// end marker.
	burst() error
	burstResult(ctx context.Context) (first, end, n int64, err error)
	close()
}

// eventTimeout bounds the wait for one event, so a broken subscriber
// cannot hang a run.
const eventTimeout = 30 * time.Second

// RunWatch runs subscriber under cfg and returns its row (with the error,
// if it failed).
func RunWatch(ctx context.Context, cfg WatchConfig, sub string, rtt time.Duration) (WatchResult, error) {
	r := WatchResult{Subscriber: sub, RTTMs: ms(rtt), TreeNodes: cfg.Tree + 2}
	err := runWatch(ctx, cfg, sub, &r)
	if err != nil {
		r.Error = err.Error()
	}
	return r, err
}

func runWatch(ctx context.Context, cfg WatchConfig, sub string, r *WatchResult) error {
	if cfg.Samples < 1 || cfg.Burst < 1 || cfg.Tree < 0 {
		return errors.New("watch: need samples >= 1, burst >= 1, tree >= 0")
	}
	writer, err := DialZK(ctx, cfg.Servers)
	if err != nil {
		return err
	}
	defer writer.Close()
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		_ = DeleteTree(dctx, cfg.Servers, cfg.Root)
	}()
	if err := EnsurePath(ctx, cfg.Servers, cfg.Root); err != nil {
		return err
	}
	node := cfg.Root + "/n"
	if err := createTree(ctx, writer, cfg.Root, cfg.Tree); err != nil {
		return err
	}
	before, err := watchEntries(cfg.Server)
	if err != nil {
		return err
	}
	recursive := watchRecursive(sub)
	watched := node
	if recursive {
		watched = cfg.Root
	}
	s, err := startSubscriber(ctx, cfg.Servers, watched, sub)
	if err != nil {
		return err
	}
	closed := false
	defer func() {
		if !closed {
			s.close()
		}
	}()
	if r.WatchedPaths, err = sessionWatches(cfg.Server, s.session()); err != nil {
		return err
	}
	after, err := watchEntries(cfg.Server)
	if err != nil {
		return err
	}
	r.WatchEntries = after - before

	// Latency: one write at a time, each timed until the subscriber saw it.
	if err := s.latency(); err != nil {
		return err
	}
	warm := max(5, cfg.Samples/10)
	lat := make([]time.Duration, 0, cfg.Samples)
	data := make([]byte, 8)
	for i := range warm + cfg.Samples {
		copy(data, strconv.Itoa(i))
		t0 := time.Now()
		if _, err := writer.Set(node, data, -1); err != nil {
			return fmt.Errorf("set %s: %w", node, err)
		}
		at, err := s.next(ctx)
		if err != nil {
			return err
		}
		if i >= warm {
			lat = append(lat, time.Duration(at-t0.UnixNano()))
		}
	}
	slices.Sort(lat)
	r.Samples = len(lat)
	r.P50Ms, r.P90Ms, r.P99Ms = ms(percentile(lat, 0.50)), ms(percentile(lat, 0.90)), ms(percentile(lat, 0.99))
	r.MaxMs = ms(lat[len(lat)-1])

	// Burst: as many writes as the writers can make, then the end marker.
	if err := s.burst(); err != nil {
		return err
	}
	t0 := time.Now()
	if err := burstWrites(ctx, writer, node, cfg.Burst, max(cfg.Writers, 1)); err != nil {
		return err
	}
	wrote := time.Since(t0)
	end := cfg.Root + "/end-1"
	if !recursive {
		end = node + "/end-1"
	}
	if _, err := writer.Create(end, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		return fmt.Errorf("create %s: %w", end, err)
	}
	_, last, n, err := s.burstResult(ctx)
	if err != nil {
		return err
	}
	r.Burst, r.Delivered = cfg.Burst, n
	r.WriterPerSec = float64(cfg.Burst) / wrote.Seconds()
	if span := time.Duration(last - t0.UnixNano()); span > 0 {
		r.ChangesPerSec = float64(cfg.Burst) / span.Seconds()
		r.EventsPerSec = float64(n) / span.Seconds()
	}

	s.close()
	closed = true
	left, err := watchEntries(cfg.Server)
	if err != nil {
		return err
	}
	r.WatchesLeft = left - before
	return nil
}

// createTree creates root/n and tree more nodes at depths 1 to 3 below
// root (root/t<i>, root/t<i>/<j>, root/t<i>/<j>/<k>), 32 requests in
// flight.
func createTree(ctx context.Context, conn *zk.Conn, root string, tree int) error {
	acl := zk.WorldACL(zk.PermAll)
	if _, err := conn.Create(root+"/n", []byte("0"), 0, acl); err != nil {
		return fmt.Errorf("create %s/n: %w", root, err)
	}
	// Levels in order, so parents exist: 1 of 10 nodes at depth 1, 3 of
	// 10 at depth 2, the rest at depth 3.
	var levels [3][]string
	d1 := max(1, tree/10)
	d2 := max(1, tree*3/10)
	for i := range d1 {
		levels[0] = append(levels[0], fmt.Sprintf("%s/t%d", root, i))
	}
	for i := range d2 {
		levels[1] = append(levels[1], fmt.Sprintf("%s/t%d/%d", root, i%d1, i))
	}
	for i := range max(0, tree-d1-d2) {
		levels[2] = append(levels[2], fmt.Sprintf("%s/t%d/%d/%d", root, (i%d2)%d1, i%d2, i))
	}
	if tree == 0 {
		return nil
	}
	data := []byte("watch-bench")
	for _, paths := range levels {
		if err := parallel(ctx, 32, len(paths), func(i int) error {
			_, err := conn.Create(paths[i], data, 0, acl)
			if err != nil {
				return fmt.Errorf("create %s: %w", paths[i], err)
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// burstWrites sets node n times from writers goroutines.
func burstWrites(ctx context.Context, conn *zk.Conn, node string, n, writers int) error {
	data := []byte("burst")
	return parallel(ctx, writers, n, func(int) error {
		if _, err := conn.Set(node, data, -1); err != nil {
			return fmt.Errorf("set %s: %w", node, err)
		}
		return nil
	})
}

// parallel runs fn(0..n-1) on workers goroutines and returns the first
// error.
func parallel(ctx context.Context, workers, n int, fn func(i int) error) error {
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		first   error
	)
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := fn(i); err != nil {
					errOnce.Do(func() { first = err })
					next.Store(int64(n))
					return
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// watchEntries is the server's watch count over both tables (mntr
// zk_watch_count; wchs counts the data table only).
func watchEntries(addr string) (int, error) {
	out, err := fourLetter(addr, "mntr")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "zk_watch_count"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, fmt.Errorf("mntr has no zk_watch_count: %q", firstLine(out))
}

// sessionWatches counts the paths session watches on the server (wchc).
func sessionWatches(addr string, session int64) (int, error) {
	out, err := fourLetter(addr, "wchc")
	if err != nil {
		return 0, err
	}
	n, in := 0, false
	for _, line := range strings.Split(out, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "0x"):
			id, err := strconv.ParseUint(t[2:], 16, 64)
			in = err == nil && int64(id) == session
		case in && strings.HasPrefix(t, "/"):
			n++
		}
	}
	return n, nil
}

func startSubscriber(ctx context.Context, servers, path, sub string) (subscriber, error) {
	switch sub {
	case WatchOursRecursive, WatchOursNode:
		return startGoSubscriber(ctx, servers, path, sub == WatchOursRecursive)
	case WatchOursCache:
		return startCacheSubscriber(ctx, servers, path)
	}
	mode := map[string]string{
		WatchCuratorRecursive: javabench.WatchRecursive,
		WatchCuratorNode:      javabench.WatchPersistent,
		WatchCuratorTreeCache: javabench.WatchTreeCache,
		WatchCuratorCache:     javabench.WatchCuratorCache,
	}[sub]
	if mode == "" {
		return nil, fmt.Errorf("unknown watch subscriber %q", sub)
	}
	w, err := javabench.StartWatch(ctx, javabench.WatchConfig{ConnectString: servers, Path: path, Mode: mode})
	if err != nil {
		return nil, err
	}
	return javaSubscriber{w}, nil
}

// javaSubscriber is Curator's side, in WatchBench.java.
type javaSubscriber struct{ w *javabench.Watcher }

func (j javaSubscriber) session() int64 { return j.w.SessionID() }
func (j javaSubscriber) latency() error { return j.w.Latency() }
func (j javaSubscriber) next(ctx context.Context) (int64, error) {
	return j.w.Next(ctx, eventTimeout)
}
func (j javaSubscriber) burst() error { return j.w.Burst() }
func (j javaSubscriber) burstResult(ctx context.Context) (int64, int64, int64, error) {
	return j.w.BurstResult(ctx, 5*time.Minute)
}
func (j javaSubscriber) close() { j.w.Close() }

// goSubscriber is ours: a framework.Watch read by one goroutine, which
// takes the time of each event as it reads it from Events.
type goSubscriber struct {
	c         *framework.Client
	w         *framework.Watcher
	recursive bool
	counting  atomic.Bool
	reset     atomic.Bool
	times     chan int64
	ends      chan [3]int64
	done      chan struct{}
}

func startGoSubscriber(ctx context.Context, servers, path string, recursive bool) (*goSubscriber, error) {
	c, err := Connect(ctx, servers)
	if err != nil {
		return nil, err
	}
	var opts []framework.WatchOption
	if recursive {
		opts = append(opts, framework.Recursive())
	}
	w, err := c.Watch(context.WithoutCancel(ctx), path, opts...)
	if err != nil {
		c.Close()
		return nil, err
	}
	s := &goSubscriber{c: c, w: w, recursive: recursive, times: make(chan int64, 1024), ends: make(chan [3]int64, 1),
		done: make(chan struct{})}
	go s.loop()
	return s, nil
}

func (s *goSubscriber) loop() {
	defer close(s.done)
	var first, n int64
	for ev := range s.w.Events() {
		now := time.Now().UnixNano()
		if s.reset.Swap(false) {
			first, n = 0, 0
		}
		switch {
		case ev.Type == framework.WatchDataChanged:
			if !s.counting.Load() {
				select {
				case s.times <- now:
				default: // nobody waits for it
				}
				continue
			}
			if n == 0 {
				first = now
			}
			n++
		case s.counting.Load() && s.isEnd(ev):
			select {
			case s.ends <- [3]int64{first, now, n}:
			default:
			}
		}
	}
}

func (s *goSubscriber) isEnd(ev framework.WatchEvent) bool {
	if s.recursive {
		_, name := framework.SplitPath(ev.Path)
		return ev.Type == framework.WatchCreated && strings.HasPrefix(name, "end-")
	}
	return ev.Type == framework.WatchChildrenChanged
}

func (s *goSubscriber) session() int64 { return s.c.SessionID() }
func (s *goSubscriber) latency() error {
	s.counting.Store(false)
	return nil
}

func (s *goSubscriber) next(ctx context.Context) (int64, error) {
	t := time.NewTimer(eventTimeout)
	defer t.Stop()
	select {
	case at := <-s.times:
		return at, nil
	case <-s.done:
		return 0, fmt.Errorf("watch ended: %w", s.w.Err())
	case <-t.C:
		return 0, fmt.Errorf("no event within %v", eventTimeout)
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

func (s *goSubscriber) burst() error {
	s.reset.Store(true)
	s.counting.Store(true)
	return nil
}

func (s *goSubscriber) burstResult(ctx context.Context) (int64, int64, int64, error) {
	t := time.NewTimer(5 * time.Minute)
	defer t.Stop()
	select {
	case r := <-s.ends:
		return r[0], r[1], r[2], nil
	case <-s.done:
		return 0, 0, 0, fmt.Errorf("watch ended: %w", s.w.Err())
	case <-t.C:
		return 0, 0, 0, errors.New("no end of burst within 5m")
	case <-ctx.Done():
		return 0, 0, 0, ctx.Err()
	}
}

func (s *goSubscriber) close() {
	_ = s.w.Close()
	<-s.done
	s.c.Close()
}

// MedianWatch merges the rows of several rounds: for each subscriber and
// round-trip time, the median of each measure (the lower of an even
// count), with every round's p50, p99 and changes/s. Order is that of the
// first appearance.
func MedianWatch(rows []WatchResult) []WatchResult {
	type key struct {
		s   string
		rtt float64
	}
	var order []key
	groups := map[key][]WatchResult{}
	for _, r := range rows {
		k := key{r.Subscriber, r.RTTMs}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	med := func(g []WatchResult, f func(WatchResult) float64) (float64, []float64) {
		var v []float64
		for _, r := range g {
			v = append(v, f(r))
		}
		s := slices.Clone(v)
		slices.Sort(s)
		return s[(len(s)-1)/2], v
	}
	var out []WatchResult
	for _, k := range order {
		var ok []WatchResult
		for _, r := range groups[k] {
			if r.Error == "" {
				ok = append(ok, r)
			}
		}
		if len(ok) == 0 {
			out = append(out, groups[k][0])
			continue
		}
		m := ok[0]
		var p50s, p99s, rates []float64
		m.P50Ms, p50s = med(ok, func(r WatchResult) float64 { return r.P50Ms })
		m.P90Ms, _ = med(ok, func(r WatchResult) float64 { return r.P90Ms })
		m.P99Ms, p99s = med(ok, func(r WatchResult) float64 { return r.P99Ms })
		m.MaxMs, _ = med(ok, func(r WatchResult) float64 { return r.MaxMs })
		m.ChangesPerSec, rates = med(ok, func(r WatchResult) float64 { return r.ChangesPerSec })
		m.EventsPerSec, _ = med(ok, func(r WatchResult) float64 { return r.EventsPerSec })
		m.WriterPerSec, _ = med(ok, func(r WatchResult) float64 { return r.WriterPerSec })
		d, _ := med(ok, func(r WatchResult) float64 { return float64(r.Delivered) })
		m.Delivered = int64(d)
		if len(ok) > 1 {
			m.RoundsP50Ms, m.RoundsP99Ms, m.RoundsChangesPerSec = p50s, p99s, rates
		}
		out = append(out, m)
	}
	return out
}
