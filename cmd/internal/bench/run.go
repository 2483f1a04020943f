package bench

import (
	"context"
	"errors"
	"fmt"
	"runtime"
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
	// Clients is the number of sessions.
	Clients int
	// PerSession is the number of workers (goroutines) per session; 0 or
	// 1 gives every worker its own session.
	PerSession int
	// MaxLeases is the number of leases of the semaphore workloads.
	MaxLeases int
	// Hold is how long a worker holds the lock (or lease) before it
	// releases it: the critical section. 0 releases at once.
	Hold time.Duration
	// Warmup is run but not measured; Measure is the measured period.
	Warmup, Measure time.Duration
	// Meter, when set, reads the server's counters around the measured
	// period and may count its requests by type after it.
	Meter *Meter
	// Procs runs every session in an OS process of its own (this binary
	// re-executed, see ServeSessionIfAsked; Curator: a JVM per session)
	// instead of all of them in this one.
	Procs bool
}

// Meter says what a run measures besides throughput and latency.
type Meter struct {
	// Server is the address mntr and stmk go to: the server itself, not a
	// proxy in front of it.
	Server string
	// Trace, when set with a positive TraceWindow, counts the server's
	// requests by type for TraceWindow after the measured period while the
	// loop goes on, unmeasured.
	Trace       *OpTrace
	TraceWindow time.Duration
}

// acquireTimeout bounds one acquire, so that a broken server cannot hang a
// run; Bench.java uses the same bound.
const acquireTimeout = 60 * time.Second

// The phases of a run. The count phase is unmeasured, like the warm-up;
// the server's requests are counted by type in it.
const (
	phaseWarmup int32 = iota
	phaseMeasure
	phaseCount
	phaseStop
)

// Run runs workload wl under cfg and returns its row. A failed run returns
// the error (the row then carries it as well).
func Run(ctx context.Context, cfg Config, wl Workload) (Result, error) {
	var (
		lat []time.Duration
		w   window
		err error
	)
	// The label reaches every goroutine the run starts, connections'
	// included, so a CPU profile can be split by workload
	// (go tool pprof -tagfocus workload=mutex/gocurator).
	pprof.Do(ctx, pprof.Labels("workload", wl.Label()), func(ctx context.Context) {
		lat, w, err = runMetered(ctx, cfg, wl)
	})
	r := Result{Workload: wl.Name, Impl: wl.Impl, Clients: cfg.Clients, PerSession: cfg.PerSession, MaxLeases: leasesOf(wl.Name, cfg.MaxLeases),
		HoldMs: ms(cfg.Hold)}
	if err != nil {
		r.Error = err.Error()
		return r, err
	}
	r = summarize(r, lat, w.period)
	applyWindow(&r, w)
	return r, nil
}

func leasesOf(workload string, max int) int {
	if workload == Semaphore || workload == SemaphoreV2 {
		return max
	}
	return 0
}

// runMetered runs wl and returns the acquire latencies of the measured
// cycles and what drive measured.
func runMetered(ctx context.Context, cfg Config, wl Workload) ([]time.Duration, window, error) {
	if cfg.Clients < 1 || cfg.Measure <= 0 || cfg.Warmup < 0 || cfg.Hold < 0 {
		return nil, window{}, fmt.Errorf("%s: need clients >= 1, measure > 0, warmup >= 0, hold >= 0", wl.Label())
	}
	if err := EnsurePath(ctx, cfg.Servers, cfg.Path); err != nil {
		return nil, window{}, err
	}
	defer func() {
		// On a fresh context: ctx may be what ended the run.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = DeleteTree(dctx, cfg.Servers, cfg.Path)
	}()

	if cfg.Procs {
		return runProcs(ctx, cfg, wl)
	}
	lockers, closeAll, err := newLockers(ctx, cfg, wl)
	defer closeAll()
	if err != nil {
		return nil, window{}, err
	}
	// What earlier runs left for the collector is not this run's cost.
	runtime.GC()

	loop := startLoop(ctx, cfg, wl, lockers)
	w, err := drive(ctx, cfg, loop)
	lat, lerr := loop.stop()
	if lerr != nil { // the worker's own error says more than drive's
		err = lerr
	}
	if err != nil {
		return nil, window{}, err
	}
	return lat, w, nil
}

// newLockers makes the Lockers of cfg's workers (cfg.Clients sessions of
// cfg.PerSession workers). closeAll closes their connections; it is to be
// called whatever the error.
func newLockers(ctx context.Context, cfg Config, wl Workload) (lockers []Locker, closeAll func(), err error) {
	per := max(cfg.PerSession, 1)
	workers := make([]*Worker, cfg.Clients*per)
	lockers = make([]Locker, len(workers))
	pool := &sessionPool{}
	closeAll = func() {
		for _, w := range workers {
			if w != nil {
				w.Close()
			}
		}
		pool.close()
	}
	for i := range workers {
		workers[i] = &Worker{ID: i, Servers: cfg.Servers, Path: cfg.Path, MaxLeases: cfg.MaxLeases}
		if per > 1 {
			workers[i].pool, workers[i].Session = pool, i/per
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		l, err := wl.New(cctx, workers[i])
		cancel()
		if err != nil {
			return nil, closeAll, fmt.Errorf("%s: worker %d: %w", wl.Label(), i, err)
		}
		lockers[i] = l
	}
	return lockers, closeAll, nil
}

// point is a client's state at a phase switch.
type point struct {
	at time.Time
	// cycles is the number of cycles completed in the phase that ended.
	cycles int64
	// cpu is the client process's CPU time so far; negative if unknown.
	cpu time.Duration
	// mallocs is this process's heap allocations so far, if hasMallocs.
	mallocs    uint64
	hasMallocs bool
}

// driver is a running closed loop whose phases the caller switches: the Go
// workers of a Workload, or Curator's JVM.
type driver interface {
	switchTo(phase int32) (point, error)
	// failed is closed when the loop failed; nil if it cannot tell early.
	failed() <-chan struct{}
}

// window is what drive measured.
type window struct {
	period time.Duration // length of the measured period
	cycles int64         // cycles completed in it
	cpu    time.Duration // the client's CPU time in it; negative if unknown
	// mallocs is the heap allocations in it, if hasMallocs.
	mallocs    uint64
	hasMallocs bool
	// server is the server's counters over it; nil without a Meter.
	server *ServerCounters
	// ops counts the requests by type over the trace window, in which
	// opCycles cycles completed.
	ops      map[string]int64
	opCycles int64
}

// drive runs d through the warm-up, the measured period and (with a
// Meter's trace) the count window, reading the server's counters just
// outside the measured period's phase switches. It leaves d in phaseStop,
// or wherever it was when it failed.
func drive(ctx context.Context, cfg Config, d driver) (window, error) {
	w := window{cpu: -1}
	wait := func(dur time.Duration) error {
		t := time.NewTimer(dur)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-d.failed():
			return errLoopFailed
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	m := cfg.Meter
	if err := wait(cfg.Warmup); err != nil {
		return w, err
	}
	var s0 ServerCounters
	if m != nil {
		var err error
		if s0, err = ReadServerCounters(m.Server); err != nil {
			return w, fmt.Errorf("server counters: %w", err)
		}
	}
	p0, err := d.switchTo(phaseMeasure)
	if err != nil {
		return w, err
	}
	if err := wait(cfg.Measure); err != nil {
		return w, err
	}
	trace := m != nil && m.Trace != nil && m.TraceWindow > 0
	next := phaseStop
	if trace {
		next = phaseCount
	}
	p1, err := d.switchTo(next)
	if err != nil {
		return w, err
	}
	w.period = p1.at.Sub(p0.at)
	w.cycles = p1.cycles
	if p0.cpu >= 0 && p1.cpu >= 0 {
		w.cpu = p1.cpu - p0.cpu
	}
	if p0.hasMallocs && p1.hasMallocs {
		w.mallocs, w.hasMallocs = p1.mallocs-p0.mallocs, true
	}
	if m != nil {
		s1, err := ReadServerCounters(m.Server)
		if err != nil {
			return w, fmt.Errorf("server counters: %w", err)
		}
		delta := s1.Sub(s0)
		w.server = &delta
	}
	if !trace {
		return w, nil
	}
	if err := m.Trace.Start(); err != nil {
		return w, err
	}
	werr := wait(m.TraceWindow)
	ops, terr := m.Trace.Stop()
	p2, err := d.switchTo(phaseStop)
	if err := errors.Join(werr, terr, err); err != nil {
		return w, err
	}
	w.ops, w.opCycles = ops, p2.cycles
	return w, nil
}

// errLoopFailed stands for the failure a loop reports when it is stopped.
var errLoopFailed = errors.New("the loop failed")

// loop is the Go workers of one run, each looping acquire → hold →
// release on its own Locker until the phase is phaseStop.
type loop struct {
	phase     atomic.Int32
	completed atomic.Int64 // cycles completed since the last switch
	wg        sync.WaitGroup
	perW      [][]time.Duration

	failOnce sync.Once
	failure  error
	failCh   chan struct{}
}

func startLoop(ctx context.Context, cfg Config, wl Workload, lockers []Locker) *loop {
	l := &loop{perW: make([][]time.Duration, len(lockers)), failCh: make(chan struct{})}
	for i, lk := range lockers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			lat := make([]time.Duration, 0, 4096)
			for {
				ph := l.phase.Load()
				if ph == phaseStop {
					break
				}
				d, err := cycle(ctx, lk, cfg.Hold)
				if err != nil {
					l.fail(fmt.Errorf("%s: worker %d: %w", wl.Label(), i, err))
					break
				}
				l.completed.Add(1)
				if ph == phaseMeasure && l.phase.Load() == phaseMeasure {
					lat = append(lat, d)
				}
			}
			l.perW[i] = lat
		}()
	}
	return l
}

func (l *loop) fail(err error) {
	l.failOnce.Do(func() { l.failure = err; close(l.failCh) })
	l.phase.Store(phaseStop)
}

func (l *loop) failed() <-chan struct{} { return l.failCh }

// switchTo changes the phase and samples this process: the Go workers are
// the only load it runs while they loop.
func (l *loop) switchTo(phase int32) (point, error) {
	p := point{at: time.Now()}
	if l.phase.Load() == phaseStop && phase != phaseStop {
		return p, errLoopFailed
	}
	l.phase.Store(phase)
	p.cycles = l.completed.Swap(0)
	p.cpu = processCPU()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	p.mallocs, p.hasMallocs = ms.Mallocs, true
	return p, nil
}

// stop ends the loop, waits for the workers and returns the acquire
// latencies of the cycles that started and finished in the measured
// period, or the loop's failure.
func (l *loop) stop() ([]time.Duration, error) {
	l.phase.Store(phaseStop)
	l.wg.Wait()
	if l.failure != nil {
		return nil, l.failure
	}
	var all []time.Duration
	for _, lat := range l.perW {
		all = append(all, lat...)
	}
	return all, nil
}

// HarnessAllocs is the heap allocations per cycle of the loop itself (the
// acquire's deadline context), measured once with a lock that does
// nothing. AllocsPerCycle leaves them out, so that it counts what the
// implementation allocates, its ZooKeeper client included.
var HarnessAllocs = sync.OnceValue(func() float64 {
	nop := Locker{Acquire: func(context.Context) error { return nil }, Release: func(context.Context) error { return nil }}
	const n = 10000
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		if _, err := cycle(context.Background(), nop, 0); err != nil {
			return 0
		}
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / n
})

// cycle acquires, holds for hold, releases, and returns the acquire
// latency (or the one l.Latency gives).
func cycle(ctx context.Context, l Locker, hold time.Duration) (time.Duration, error) {
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
	if l.Latency != nil {
		if v := l.Latency(); v > 0 {
			d = v
		}
	}
	if hold > 0 {
		time.Sleep(hold)
	}
	if err := l.Release(ctx); err != nil {
		return 0, fmt.Errorf("release: %w", err)
	}
	return d, nil
}
