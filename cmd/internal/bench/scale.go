package bench

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locking"
	"github.com/gocurator/curator/recipes/mutex"
)

// ScaleConfig is the scale scenario: queues of waiting mutex handles spread
// over Clients clients, released one after the other.
type ScaleConfig struct {
	Servers string
	Path    string
	Clients int   // 50
	Waiters []int // 10, 100, 1000
}

// ScaleStep is one queue length.
type ScaleStep struct {
	Waiters int `json:"waiters"`
	// Repeats is how many queues of Waiters were run; Served counts the
	// waiters served over all of them.
	Repeats int `json:"repeats"`
	Served  int `json:"served"`
	// InOrder: every waiter was served, in the order of its node's
	// sequence number (FIFO); Problem says what broke it otherwise.
	InOrder bool   `json:"in_order"`
	Problem string `json:"problem,omitempty"`
	// EnqueueSeconds is the time until all waiters of the first queue
	// were queued (node created and watch set).
	EnqueueSeconds float64 `json:"enqueue_seconds"`
	// HandOver* describe the time from one holder's release call to the
	// next holder's Acquire returning, in ms, over all queues.
	HandOverMeanMs float64 `json:"handover_mean_ms"`
	HandOverP50Ms  float64 `json:"handover_p50_ms"`
	HandOverP99Ms  float64 `json:"handover_p99_ms"`
	// HeapBytes and StackBytes grew by this much (after GC) from before
	// the handles of the first queue were made to when all of them were
	// waiting.
	HeapBytes  int64 `json:"heap_bytes"`
	StackBytes int64 `json:"stack_bytes"`
	Goroutines int   `json:"goroutines"`
}

// Scale is the scale scenario's result.
type Scale struct {
	Clients int         `json:"clients"`
	Steps   []ScaleStep `json:"steps"`
	// Single is the largest queue with all waiters on one client; its
	// heap and stack numbers include that client's connection.
	Single ScaleStep `json:"single_client"`
}

// OK reports whether every queue was served completely and in order.
func (s Scale) OK() bool {
	for _, st := range append(s.Steps, s.Single) {
		if !st.InOrder {
			return false
		}
	}
	return len(s.Steps) > 0
}

// singleMax is the largest queue the single-client step runs.
const singleMax = 1000

// scaleTimeout bounds a step of k waiters: a queue that does not drain is
// a failure. Every waiter lists the queue ahead of it when it joins (as
// Curator's and every ZooKeeper lock recipe's waiters do), so enqueueing k
// waiters costs time in k², about 50 s for 10,000 on two cores.
func scaleTimeout(k int) time.Duration {
	return 5*time.Minute + time.Duration(k)*time.Duration(k)*time.Microsecond
}

// RunScale runs the scale scenario; progress lines go to logf.
func RunScale(ctx context.Context, cfg ScaleConfig, logf func(string, ...any)) (Scale, error) {
	out := Scale{Clients: cfg.Clients}
	clients := make([]*framework.Client, 0, cfg.Clients)
	defer func() {
		for _, c := range clients {
			_ = c.Close()
		}
	}()
	for range cfg.Clients {
		c, err := Connect(ctx, cfg.Servers)
		if err != nil {
			return out, fmt.Errorf("scale: %w", err)
		}
		clients = append(clients, c)
	}
	for _, k := range cfg.Waiters {
		logf("scale: %d waiters over %d clients", k, len(clients))
		st, err := scaleStep(ctx, cfg.Servers, fmt.Sprintf("%s/multi-%d", cfg.Path, k), clients[0], clients, k, nil)
		if err != nil {
			return out, err
		}
		out.Steps = append(out.Steps, st)
	}
	if len(cfg.Waiters) == 0 {
		return out, nil
	}
	// The single client gets the largest queue of at most singleMax: every
	// waiter lists the queue ahead of it when it joins, and 10,000 of them
	// on one session pass 2.7 GB of listings through one socket, which
	// takes longer than the session's ping timeout (the connection is
	// closed), for any recipe of this layout.
	k := cfg.Waiters[0]
	for _, n := range cfg.Waiters {
		if n <= singleMax {
			k = max(k, n)
		}
	}
	logf("scale: %d waiters on one client", k)
	// The single client is connected after the baseline, so its own
	// connection (go-zookeeper's buffers) counts against it.
	var single *framework.Client
	connectSingle := func() ([]*framework.Client, error) {
		c, err := Connect(ctx, cfg.Servers)
		if err != nil {
			return nil, err
		}
		single = c
		return []*framework.Client{c}, nil
	}
	st, err := scaleStep(ctx, cfg.Servers, fmt.Sprintf("%s/single-%d", cfg.Path, k), clients[0], nil, k, connectSingle)
	if single != nil {
		_ = single.Close()
	}
	out.Single = st
	return out, err
}

// minHandOvers: short queues are run again until about this many
// hand-overs were timed, so their mean is not one queue's noise.
const minHandOvers = 1000

// scaleStep runs queues of k waiters until about minHandOvers hand-overs
// were timed. Memory and enqueue time are those of the first queue; order
// is checked on every queue.
func scaleStep(ctx context.Context, servers, path string, holderClient *framework.Client,
	clients []*framework.Client, k int, connect func() ([]*framework.Client, error)) (ScaleStep, error) {
	reps := max(1, (minHandOvers+k-1)/k)
	if connect != nil {
		// The first queue connects (after its memory baseline); the
		// later ones reuse what it connected.
		connectOnce := connect
		connect = func() ([]*framework.Client, error) {
			cs, err := connectOnce()
			clients = cs
			return cs, err
		}
	}
	var (
		first ScaleStep
		gaps  []time.Duration
		total time.Duration
	)
	for i := range reps {
		st, g, err := scaleQueue(ctx, servers, fmt.Sprintf("%s-%d", path, i), holderClient, clients, k, connect)
		if err != nil {
			return st, err
		}
		connect = nil // the single client is made once, by the first queue
		if i == 0 {
			first = st
		}
		if !st.InOrder && first.InOrder {
			first.InOrder, first.Problem = false, fmt.Sprintf("queue %d: %s", i, st.Problem)
		}
		gaps = append(gaps, g...)
		for _, d := range g {
			total += d
		}
	}
	first.Served = len(gaps)
	first.Repeats = reps
	if len(gaps) > 0 {
		first.HandOverMeanMs = ms(total) / float64(len(gaps))
		r := summarize(Result{}, gaps, time.Second)
		first.HandOverP50Ms, first.HandOverP99Ms = r.P50Ms, r.P99Ms
	}
	return first, nil
}

type grant struct {
	seq int32
	at  time.Time
}

// scaleQueue queues k waiting handles spread over clients (or over the
// clients connect returns, after the memory baseline), behind a holder on
// holderClient, then releases the holder and lets the queue drain: each
// waiter releases as soon as it holds.
func scaleQueue(ctx context.Context, servers, path string, holderClient *framework.Client,
	clients []*framework.Client, k int, connect func() ([]*framework.Client, error)) (ScaleStep, []time.Duration, error) {
	st := ScaleStep{Waiters: k}
	ctx, cancel := context.WithTimeout(ctx, scaleTimeout(k))
	defer cancel()
	if err := EnsurePath(ctx, servers, path); err != nil {
		return st, nil, err
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		_ = DeleteTree(dctx, servers, path)
	}()
	holder := mutex.New(holderClient, path)
	if err := holder.Acquire(ctx); err != nil {
		return st, nil, fmt.Errorf("scale: holder: %w", err)
	}
	holderSeq, _ := locking.Sequence(holder.Node(), "lock-")
	watches0, watchErr := watchCount(servers)

	before := memory()
	if connect != nil {
		var err error
		if clients, err = connect(); err != nil {
			_ = holder.Release(ctx)
			return st, nil, fmt.Errorf("scale: %w", err)
		}
	}
	var (
		mu     sync.Mutex
		grants = make([]grant, 0, k)
		errs   []error
		wg     sync.WaitGroup
	)
	start := time.Now()
	for i := range k {
		m := mutex.New(clients[i%len(clients)], path)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := m.Acquire(ctx); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				return
			}
			seq, _ := locking.Sequence(m.Node(), "lock-")
			mu.Lock()
			grants = append(grants, grant{seq, time.Now()})
			mu.Unlock()
			if err := m.Release(ctx); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}

	// Queued means: a node each, and (when wchs answers) a watch each on
	// the node ahead.
	// The watch count (a four-letter word) is asked first: it is cheap,
	// and listing a queue of 10,000 every poll would load the server the
	// enqueue is timed on.
	// A waiter may set more than one watch (its predecessor, the node
	// before that, its own node), so the count must also have stopped
	// growing: until it does, waiters are still sending requests, and
	// the memory figures would count those in flight.
	lastWatches := -1
	queued := func() bool {
		if watchErr == nil {
			n, err := watchCount(servers)
			if err == nil {
				settled := n == lastWatches
				lastWatches = n
				if n-watches0 < k || !settled {
					return false
				}
			}
		}
		ps, err := holder.Participants(ctx)
		return err == nil && len(ps) >= k+1
	}
	failed := func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(errs) > 0 {
			return fmt.Errorf("scale: %d of %d waiters failed while queueing, first: %w", len(errs), k, errs[0])
		}
		return nil
	}
	for !queued() {
		if err := failed(); err != nil {
			_ = holder.Release(context.WithoutCancel(ctx))
			wg.Wait()
			return st, nil, err
		}
		select {
		case <-ctx.Done():
			_ = holder.Release(context.WithoutCancel(ctx))
			wg.Wait()
			return st, nil, fmt.Errorf("scale: %d waiters not queued after %v", k, scaleTimeout(k))
		case <-time.After(100 * time.Millisecond):
		}
	}
	st.EnqueueSeconds = time.Since(start).Seconds()
	if watchErr != nil {
		// No wchs: give the last waiters time to set their watches.
		time.Sleep(time.Second)
	}
	after := memory()
	st.HeapBytes = int64(after.heap) - int64(before.heap)
	st.StackBytes = int64(after.stack) - int64(before.stack)
	st.Goroutines = after.goroutines - before.goroutines

	released := time.Now()
	if err := holder.Release(ctx); err != nil {
		return st, nil, fmt.Errorf("scale: holder release: %w", err)
	}
	wg.Wait()
	if len(errs) > 0 {
		return st, nil, fmt.Errorf("scale: %d of %d waiters failed, first: %w", len(errs), k, errs[0])
	}
	st.Served = len(grants)
	st.InOrder, st.Problem = checkOrder(grants, holderSeq, k)
	gaps := make([]time.Duration, len(grants))
	prev := released
	for i, g := range grants {
		gaps[i] = g.at.Sub(prev)
		prev = g.at
	}
	return st, gaps, nil
}

// checkOrder: all k served, each after the holder, in increasing sequence.
func checkOrder(grants []grant, holderSeq int32, k int) (bool, string) {
	if len(grants) != k {
		return false, fmt.Sprintf("%d of %d waiters served", len(grants), k)
	}
	prev := holderSeq
	for i, g := range grants {
		if !locking.Before(prev, g.seq) {
			return false, fmt.Sprintf("grant %d: sequence %d served after %d", i, g.seq, prev)
		}
		prev = g.seq
	}
	return true, ""
}

type memStats struct {
	heap, stack uint64
	goroutines  int
}

// memory returns live heap and stack after a full collection.
func memory() memStats {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return memStats{heap: m.HeapAlloc, stack: m.StackInuse, goroutines: runtime.NumGoroutine()}
}
