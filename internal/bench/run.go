package bench

import (
	"context"
	"errors"
	"fmt"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"
)

// Config is one run of the loop.
type Config struct {
	// Servers is the ZooKeeper connect string (host:port[,host:port...]).
	Servers string
	// Path is the lock path; it is created (persistent) before the run and
	// deleted with everything under it after.
	Path string
	// Clients is the number of workers, each with its own session and
	// goroutine.
	Clients int
	// MaxLeases is the number of leases of the semaphore workloads.
	MaxLeases int
	// Warmup is run but not measured; Measure is the measured period.
	Warmup, Measure time.Duration
}

// acquireTimeout bounds one acquire, so that a broken server cannot hang a
// run; Bench.java uses the same bound.
const acquireTimeout = 60 * time.Second

const (
	phaseWarmup int32 = iota
	phaseMeasure
	phaseStop
)

// Run runs workload wl under cfg and returns its row. A failed run returns
// the error (the row then carries it as well).
func Run(ctx context.Context, cfg Config, wl Workload) (Result, error) {
	var (
		lat    []time.Duration
		period time.Duration
		err    error
	)
	// The label reaches every goroutine the run starts, connections'
	// included, so a CPU profile can be split by workload
	// (go tool pprof -tagfocus workload=mutex/gocurator).
	pprof.Do(ctx, pprof.Labels("workload", wl.Label()), func(ctx context.Context) {
		lat, period, err = run(ctx, cfg, wl)
	})
	r := Result{Workload: wl.Name, Impl: wl.Impl, Clients: cfg.Clients, MaxLeases: leasesOf(wl.Name, cfg.MaxLeases)}
	if err != nil {
		r.Error = err.Error()
		return r, err
	}
	return summarize(r, lat, period), nil
}

func leasesOf(workload string, max int) int {
	if workload == Semaphore || workload == SemaphoreV2 {
		return max
	}
	return 0
}

// run returns the acquire latencies of the measured cycles and the length
// of the measured period.
func run(ctx context.Context, cfg Config, wl Workload) ([]time.Duration, time.Duration, error) {
	if cfg.Clients < 1 || cfg.Measure <= 0 || cfg.Warmup < 0 {
		return nil, 0, fmt.Errorf("%s: need clients >= 1, measure > 0, warmup >= 0", wl.Label())
	}
	if err := EnsurePath(ctx, cfg.Servers, cfg.Path); err != nil {
		return nil, 0, err
	}
	defer func() {
		// On a fresh context: ctx may be what ended the run.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = DeleteTree(dctx, cfg.Servers, cfg.Path)
	}()

	workers := make([]*Worker, cfg.Clients)
	lockers := make([]Locker, cfg.Clients)
	defer func() {
		for _, w := range workers {
			if w != nil {
				w.Close()
			}
		}
	}()
	for i := range workers {
		workers[i] = &Worker{ID: i, Servers: cfg.Servers, Path: cfg.Path, MaxLeases: cfg.MaxLeases}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		l, err := wl.New(cctx, workers[i])
		cancel()
		if err != nil {
			return nil, 0, fmt.Errorf("%s: worker %d: %w", wl.Label(), i, err)
		}
		lockers[i] = l
	}

	var (
		phase    atomic.Int32
		failOnce sync.Once
		failure  error
		failed   = make(chan struct{})
		wg       sync.WaitGroup
		perW     = make([][]time.Duration, cfg.Clients)
	)
	fail := func(err error) {
		failOnce.Do(func() { failure = err; close(failed) })
		phase.Store(phaseStop)
	}
	for i, l := range lockers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]time.Duration, 0, 4096)
			for phase.Load() != phaseStop {
				measured := phase.Load() == phaseMeasure
				d, err := cycle(ctx, l)
				if err != nil {
					fail(fmt.Errorf("%s: worker %d: %w", wl.Label(), i, err))
					break
				}
				if measured && phase.Load() == phaseMeasure {
					lat = append(lat, d)
				}
			}
			perW[i] = lat
		}()
	}

	wait := func(d time.Duration) error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-failed:
			return failure
		case <-ctx.Done():
			phase.Store(phaseStop)
			return ctx.Err()
		}
	}
	err := wait(cfg.Warmup)
	start := time.Now()
	if err == nil {
		phase.Store(phaseMeasure)
		err = wait(cfg.Measure)
	}
	phase.Store(phaseStop)
	period := time.Since(start)
	wg.Wait()
	if err == nil {
		err = failure
	}
	if err != nil {
		return nil, 0, err
	}
	var all []time.Duration
	for _, l := range perW {
		all = append(all, l...)
	}
	return all, period, nil
}

// cycle acquires and releases once and returns the acquire latency.
func cycle(ctx context.Context, l Locker) (time.Duration, error) {
	actx, cancel := context.WithTimeout(ctx, acquireTimeout)
	defer cancel()
	t0 := time.Now()
	if err := l.Acquire(actx); err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return 0, fmt.Errorf("acquire took longer than %v: %w", acquireTimeout, err)
		}
		return 0, fmt.Errorf("acquire: %w", err)
	}
	d := time.Since(t0)
	if err := l.Release(ctx); err != nil {
		return 0, fmt.Errorf("release: %w", err)
	}
	return d, nil
}
