package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/discovery"
)

// RegistryWorkerEnv, set in a process's environment to a JSON
// registryWorkerConfig, makes curatorbench (or the bench test binary) a
// worker of the registry scale run: it reads commands from stdin and
// answers each with one JSON line on stdout (see ServeRegistryWorker).
const RegistryWorkerEnv = "CURATORBENCH_REGISTRY_WORKER"

// registryWorkerConfig is what a worker process is started with.
type registryWorkerConfig struct {
	Index   int    `json:"index"`
	Servers string `json:"servers"`
	Base    string `json:"base"`
	Service string `json:"service"`
	// Caches is the worker's ServiceCaches, each on a session of its own.
	Caches int `json:"caches"`
}

// workerCmd is one command to a worker; workerReply its answer.
type workerCmd struct {
	Op string `json:"op"` // connect, start, await, expect, report, close
	N  int    `json:"n,omitempty"`
	ID string `json:"id,omitempty"`
}

type workerReply struct {
	Err string `json:"err,omitempty"`
	// BaseHeap is the live heap before anything was connected (connect).
	BaseHeap int64 `json:"base_heap,omitempty"`
	// Heap is the live heap after a GC once the command was done
	// (connect, start, await).
	Heap       int64 `json:"heap,omitempty"`
	Goroutines int   `json:"goroutines,omitempty"`
	// StartNs is how long starting every cache took (start).
	StartNs int64 `json:"start_ns,omitempty"`
	// LastNs is the wall clock (Unix ns) at which the last cache reached
	// the count (await).
	LastNs int64 `json:"last_ns,omitempty"`
	// Seen is, per cache, the wall clock (Unix ns) at which its listener
	// first had the instance (report).
	Seen []int64 `json:"seen,omitempty"`
}

// ServeRegistryWorker runs a worker of the registry scale run if
// RegistryWorkerEnv is set, on stdin and stdout, and reports whether it
// did; err is the worker's failure.
func ServeRegistryWorker() (served bool, err error) {
	spec := os.Getenv(RegistryWorkerEnv)
	if spec == "" {
		return false, nil
	}
	var cfg registryWorkerConfig
	if err := json.Unmarshal([]byte(spec), &cfg); err != nil {
		return true, fmt.Errorf("%s: %w", RegistryWorkerEnv, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &registryWorker{cfg: cfg, changed: make(chan struct{})}
	defer w.close()
	return true, w.serve(ctx, os.Stdin, os.Stdout)
}

// registryWorker holds one process's sessions and caches.
type registryWorker struct {
	cfg     registryWorkerConfig
	clients []*framework.Client
	discs   []*discovery.Discovery
	caches  []*discovery.ServiceCache

	mu       sync.Mutex
	counts   []int              // per cache: instances in its latest list
	lastNs   []int64            // per cache: when its latest list came
	expected map[string][]int64 // instance id -> per cache, when first seen (0: not yet)
	changed  chan struct{}      // closed and replaced on every listener call
}

func (w *registryWorker) serve(ctx context.Context, in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	enc := json.NewEncoder(out)
	for sc.Scan() {
		var cmd workerCmd
		if err := json.Unmarshal(sc.Bytes(), &cmd); err != nil {
			return err
		}
		rep, err := w.do(ctx, cmd)
		if err != nil {
			rep.Err = err.Error()
		}
		if err := enc.Encode(rep); err != nil {
			return err
		}
		if cmd.Op == "close" {
			return nil
		}
	}
	return sc.Err()
}

// workerWait bounds a worker's wait for its caches to catch up.
const workerWait = 10 * time.Minute

func (w *registryWorker) do(ctx context.Context, cmd workerCmd) (workerReply, error) {
	switch cmd.Op {
	case "connect":
		base := int64(liveHeap())
		if err := w.connect(ctx); err != nil {
			return workerReply{}, err
		}
		return workerReply{BaseHeap: base, Heap: int64(liveHeap()), Goroutines: runtime.NumGoroutine()}, nil
	case "start":
		began := time.Now()
		if err := w.start(ctx); err != nil {
			return workerReply{}, err
		}
		took := time.Since(began)
		return workerReply{StartNs: int64(took), Heap: int64(liveHeap()), Goroutines: runtime.NumGoroutine()}, nil
	case "await":
		last, err := w.await(ctx, cmd.N)
		if err != nil {
			return workerReply{}, err
		}
		return workerReply{LastNs: last, Heap: int64(liveHeap()), Goroutines: runtime.NumGoroutine()}, nil
	case "expect":
		w.mu.Lock()
		w.expected[cmd.ID] = make([]int64, len(w.caches))
		w.mu.Unlock()
		return workerReply{}, nil
	case "report":
		seen, err := w.report(ctx, cmd.ID)
		return workerReply{Seen: seen}, err
	case "close":
		w.close()
		return workerReply{}, nil
	}
	return workerReply{}, fmt.Errorf("unknown command %q", cmd.Op)
}

func (w *registryWorker) connect(ctx context.Context) error {
	n := w.cfg.Caches
	w.clients = make([]*framework.Client, n)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i := range n {
		g.Go(func() error {
			c, err := Connect(gctx, w.cfg.Servers)
			w.clients[i] = c
			return err
		})
	}
	return g.Wait()
}

func (w *registryWorker) start(ctx context.Context) error {
	n := len(w.clients)
	w.counts, w.lastNs = make([]int, n), make([]int64, n)
	w.expected = map[string][]int64{}
	for i, c := range w.clients {
		d := discovery.New(c, w.cfg.Base)
		s := d.Cache(w.cfg.Service)
		s.Listen(func(list []discovery.Instance) { w.saw(i, list) })
		w.discs, w.caches = append(w.discs, d), append(w.caches, s)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, s := range w.caches {
		g.Go(func() error { return s.Start(gctx) })
	}
	return g.Wait()
}

// saw records cache i's new list: its size, and when an expected instance
// first appears in it. The list is sorted by node name, which is the
// instance id.
func (w *registryWorker) saw(i int, list []discovery.Instance) {
	now := time.Now().UnixNano()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.counts[i], w.lastNs[i] = len(list), now
	for id, seen := range w.expected {
		if seen[i] != 0 {
			continue
		}
		if _, ok := slices.BinarySearchFunc(list, id, func(x discovery.Instance, id string) int { return strings.Compare(x.ID, id) }); ok {
			seen[i] = now
		}
	}
	close(w.changed)
	w.changed = make(chan struct{})
}

// waitFor waits until done, called with w.mu held, is true.
func (w *registryWorker) waitFor(ctx context.Context, done func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, workerWait)
	defer cancel()
	for {
		w.mu.Lock()
		ok, ch := done(), w.changed
		w.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// await waits until every cache lists n instances or more and returns when
// the last of them got there.
func (w *registryWorker) await(ctx context.Context, n int) (int64, error) {
	var last int64
	err := w.waitFor(ctx, func() bool {
		last = 0
		for i, c := range w.counts {
			if c < n {
				return false
			}
			last = max(last, w.lastNs[i])
		}
		return true
	})
	if err != nil {
		w.mu.Lock()
		defer w.mu.Unlock()
		return 0, fmt.Errorf("worker %d: caches at %v of %d instances: %w", w.cfg.Index, w.counts, n, err)
	}
	return last, nil
}

// report waits until every cache has seen instance id and returns when
// each did.
func (w *registryWorker) report(ctx context.Context, id string) ([]int64, error) {
	var seen []int64
	err := w.waitFor(ctx, func() bool {
		seen = w.expected[id]
		return seen != nil && !slices.Contains(seen, 0)
	})
	w.mu.Lock()
	delete(w.expected, id)
	w.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("worker %d: instance %s: %w", w.cfg.Index, id, err)
	}
	return seen, nil
}

func (w *registryWorker) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var errs []error
	for _, d := range w.discs {
		errs = append(errs, d.Close(ctx))
	}
	for _, c := range w.clients {
		if c != nil {
			errs = append(errs, c.Close())
		}
	}
	w.discs, w.caches, w.clients = nil, nil, nil
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintln(os.Stderr, "registry worker: close:", err)
	}
}
