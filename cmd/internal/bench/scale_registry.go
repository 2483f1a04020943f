package bench

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/discovery"
)

// RegistrySettings are the registry scale run's settings
// (curatorbench -registry-scale).
type RegistrySettings struct {
	// Instances is how many instances the registrar registers in bulk.
	Instances int `json:"instances"`
	// Caches is how many ServiceCaches of the service there are in all,
	// each on a session of its own, spread evenly over Procs worker
	// processes.
	Caches int `json:"caches"`
	Procs  int `json:"procs"`
	// Samples is how many registrations, one at a time after the bulk,
	// time the fan-out to every cache.
	Samples int `json:"samples"`
	// Registrars is how many goroutines register the bulk, on one session.
	Registrars int `json:"registrars"`
	// IdleSeconds is how long the servers' idle CPU is measured.
	IdleSeconds float64 `json:"idle_seconds"`
}

// CheckRegistrySettings rejects settings the run cannot use.
func CheckRegistrySettings(s RegistrySettings) error {
	switch {
	case s.Instances < 1 || s.Samples < 1 || s.Registrars < 1 || s.IdleSeconds <= 0:
		return errors.New("registry: instances, samples, registrars and the idle time must be positive")
	case s.Procs < 1 || s.Caches < s.Procs || s.Caches%s.Procs != 0:
		return fmt.Errorf("registry: %d caches do not spread evenly over %d processes", s.Caches, s.Procs)
	}
	return nil
}

// RegistryMember is one server of the ensemble the run measures.
type RegistryMember struct {
	Addr string `json:"addr"`
	// Pid is the server's JVM; its CPU time is read from /proc.
	Pid int `json:"pid"`
}

// RegistryPhase is what the servers did during one phase of the run,
// summed over the members.
type RegistryPhase struct {
	Registrations int     `json:"registrations"`
	Seconds       float64 `json:"seconds"`
	// ServerCPUSeconds is the JVMs' CPU time (user and system) over the
	// phase; -1 when /proc could not be read.
	ServerCPUSeconds float64 `json:"server_cpu_seconds"`
	// Counters are mntr's over the phase: Notifications counts the watch
	// events the servers sent.
	Counters ServerCounters `json:"counters"`
	// ClientCPUSeconds is the worker processes' CPU time over the phase.
	ClientCPUSeconds float64 `json:"client_cpu_seconds"`
	// IdleCPUSeconds is the part of ServerCPUSeconds the servers spend
	// idle, with every session connected (ticks, pings, the JIT, the
	// collector): the idle phase's rate times this phase's length.
	// Measured last, when the JIT has settled, it may still count some of
	// the phases' own work (a collection they left): an upper bound.
	IdleCPUSeconds float64 `json:"idle_cpu_seconds"`
}

// NetServerCPUSeconds is ServerCPUSeconds less the idle servers' share.
func (p RegistryPhase) NetServerCPUSeconds() float64 {
	if p.ServerCPUSeconds < 0 {
		return -1
	}
	return max(p.ServerCPUSeconds-p.IdleCPUSeconds, 0)
}

// ServerCPUPerEventUs is the servers' CPU time per watch event sent, in
// µs: everything the servers did in the phase beyond idling (the writes,
// the reads that
// follow the events) divided by every event sent (a registration's own
// node watches its path: one of the events is the registrar's).
func (p RegistryPhase) ServerCPUPerEventUs() float64 {
	if p.Counters.Notifications <= 0 || p.ServerCPUSeconds < 0 {
		return -1
	}
	return p.NetServerCPUSeconds() * 1e6 / float64(p.Counters.Notifications)
}

// RegistryResult is what the registry scale run measured.
type RegistryResult struct {
	Settings RegistrySettings `json:"settings"`
	Members  []RegistryMember `json:"members"`
	LoadAvg  string           `json:"load_avg,omitempty"`
	// NodeBytes is the data of one registered instance node.
	NodeBytes int `json:"node_bytes"`
	// ListingBytes is the getChildren reply's list of the service's
	// children after the bulk: 4 bytes of count, and 4 of length plus the
	// name per child.
	ListingBytes int `json:"listing_bytes"`

	// Heap is summed over the workers, live after GC: before connecting,
	// with the sessions, with the caches started on the empty service,
	// and with the caches holding every instance.
	HeapBaseBytes     int64 `json:"heap_base_bytes"`
	HeapSessionsBytes int64 `json:"heap_sessions_bytes"`
	HeapCachesBytes   int64 `json:"heap_caches_bytes"`
	HeapFullBytes     int64 `json:"heap_full_bytes"`
	Goroutines        int   `json:"goroutines"`
	// StartMs is the slowest worker's time to start its caches.
	StartMs float64 `json:"start_ms"`

	// Idle is IdleSeconds with the caches running and nothing changing,
	// measured last.
	Idle RegistryPhase `json:"idle"`
	// WatchesPerServer is wchs's total per member once the caches run.
	WatchesPerServer []int `json:"watches_per_server"`

	// Bulk is the registration of Instances; RegisterSeconds ends when
	// the last Register returned, CatchUpSeconds when the last cache held
	// every instance.
	Bulk            RegistryPhase `json:"bulk"`
	RegisterSeconds float64       `json:"register_seconds"`
	CatchUpSeconds  float64       `json:"catch_up_seconds"`
	// Sampled is the phase of the Samples registrations one at a time;
	// FanOut* are, over them, the time from Register's return to the
	// first and to the last cache having the instance, in ms (negative
	// when a cache had it before Register returned: the event races the
	// create's reply).
	Sampled       RegistryPhase `json:"sampled"`
	FanOutFirstMs Dist          `json:"fan_out_first_ms"`
	FanOutLastMs  Dist          `json:"fan_out_last_ms"`
	// Unwatched registers Instances instances of a service no cache
	// watches: the servers' cost of a registration without fan-out.
	Unwatched RegistryPhase `json:"unwatched"`
}

// Dist is the median, 99th percentile and maximum of samples.
type Dist struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

func distOf(xs []float64) Dist {
	if len(xs) == 0 {
		return Dist{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	at := func(q float64) float64 { return s[min(len(s)-1, int(q*float64(len(s))))] }
	return Dist{P50: at(0.5), P99: at(0.99), Max: s[len(s)-1]}
}

// MarginalCPUPerEventUs is the servers' CPU time a registration costs
// per watching cache, in µs: a watched registration's CPU less an
// unwatched one's, over the caches. It holds the event, its send, and
// the read of the new instance that follows it.
func (r RegistryResult) MarginalCPUPerEventUs() float64 {
	b, u := r.Bulk, r.Unwatched
	if b.ServerCPUSeconds < 0 || u.ServerCPUSeconds < 0 {
		return -1
	}
	per := b.NetServerCPUSeconds()/float64(b.Registrations) - u.NetServerCPUSeconds()/float64(u.Registrations)
	return per * 1e6 / float64(r.Settings.Caches)
}

// HeapPerCacheBytes is the heap one started cache of an empty service
// takes, its session not counted.
func (r RegistryResult) HeapPerCacheBytes() float64 {
	return float64(r.HeapCachesBytes-r.HeapSessionsBytes) / float64(r.Settings.Caches)
}

// HeapPerSessionBytes is the heap one connected session takes.
func (r RegistryResult) HeapPerSessionBytes() float64 {
	return float64(r.HeapSessionsBytes-r.HeapBaseBytes) / float64(r.Settings.Caches)
}

// HeapPerInstanceBytes is the heap one instance takes in one cache.
func (r RegistryResult) HeapPerInstanceBytes() float64 {
	return float64(r.HeapFullBytes-r.HeapCachesBytes) / float64(r.Settings.Caches*r.Settings.Instances)
}

// RegistryRun is where the registry scale run runs.
type RegistryRun struct {
	Servers string
	Members []RegistryMember
	// Worker returns the command of a worker process; the run sets its
	// environment (RegistryWorkerEnv) and pipes.
	Worker func() *exec.Cmd
	Logf   func(string, ...any)
}

// RunRegistryScale measures a service registry at scale: Procs worker
// processes hold Caches ServiceCaches of one service, a registrar in this
// process registers Instances instances, then Samples more one at a time,
// then as many of a service nobody watches.
func RunRegistryScale(ctx context.Context, run RegistryRun, s RegistrySettings) (RegistryResult, error) {
	r := RegistryResult{Settings: s, Members: run.Members, LoadAvg: LoadAvg()}
	if err := CheckRegistrySettings(s); err != nil {
		return r, err
	}
	base := fmt.Sprintf("/curatorbench/registry-%d", time.Now().UnixNano())
	const service = "scale"
	workers, err := startRegistryWorkers(run, base, service, s)
	defer func() {
		for _, w := range workers {
			w.stop()
		}
	}()
	if err != nil {
		return r, err
	}
	c, err := Connect(ctx, run.Servers)
	if err != nil {
		return r, err
	}
	defer c.Close()
	d := discovery.New(c, base)
	defer func() { _ = d.Close(context.WithoutCancel(ctx)) }()
	all := func(cmd workerCmd) ([]workerReply, error) { return askAll(ctx, workers, cmd) }

	run.Logf("registry: %d sessions in %d processes", s.Caches, s.Procs)
	reps, err := all(workerCmd{Op: "connect"})
	if err != nil {
		return r, err
	}
	for _, rep := range reps {
		r.HeapBaseBytes += rep.BaseHeap
		r.HeapSessionsBytes += rep.Heap
	}
	if reps, err = all(workerCmd{Op: "start"}); err != nil {
		return r, err
	}
	for _, rep := range reps {
		r.HeapCachesBytes += rep.Heap
		r.StartMs = max(r.StartMs, float64(rep.StartNs)/1e6)
	}
	for _, m := range run.Members {
		n, err := serverWatches(m.Addr)
		if err != nil {
			return r, err
		}
		r.WatchesPerServer = append(r.WatchesPerServer, n)
	}
	run.Logf("registry: %d caches started (slowest process %.0f ms), server watches %v", s.Caches, r.StartMs, r.WatchesPerServer)

	// The bulk: the caches follow Instances registrations.
	meter := newPhaseMeter(run.Members, workers)
	began := time.Now()
	if err := registerMany(ctx, d, service, "b", s.Instances, s.Registrars); err != nil {
		return r, err
	}
	r.RegisterSeconds = time.Since(began).Seconds()
	run.Logf("registry: %d instances registered in %.1f s; waiting for the caches", s.Instances, r.RegisterSeconds)
	if reps, err = all(workerCmd{Op: "await", N: s.Instances}); err != nil {
		return r, err
	}
	var last int64
	for _, rep := range reps {
		last = max(last, rep.LastNs)
		r.HeapFullBytes += rep.Heap
		r.Goroutines += rep.Goroutines
	}
	r.CatchUpSeconds = float64(last-began.UnixNano()) / 1e9
	r.Bulk = meter.done(s.Instances)
	run.Logf("registry: every cache holds %d instances after %.1f s; servers %.1f s CPU, %d events",
		s.Instances, r.CatchUpSeconds, r.Bulk.ServerCPUSeconds, r.Bulk.Counters.Notifications)
	if r.NodeBytes, r.ListingBytes, err = sizes(ctx, c, framework.JoinPath(base, service)); err != nil {
		return r, err
	}

	// The samples: one registration at a time, timed to every cache.
	meter = newPhaseMeter(run.Members, workers)
	var first, lastMs []float64
	for k := range s.Samples {
		id := newUUID()
		if _, err := all(workerCmd{Op: "expect", ID: id}); err != nil {
			return r, err
		}
		if err := d.Register(ctx, registryInstance(service, id, k)); err != nil {
			return r, err
		}
		t0 := time.Now().UnixNano()
		if reps, err = all(workerCmd{Op: "report", ID: id}); err != nil {
			return r, err
		}
		lo, hi := int64(1<<62), int64(0)
		for _, rep := range reps {
			for _, t := range rep.Seen {
				lo, hi = min(lo, t), max(hi, t)
			}
		}
		first, lastMs = append(first, float64(lo-t0)/1e6), append(lastMs, float64(hi-t0)/1e6)
	}
	r.Sampled = meter.done(s.Samples)
	r.FanOutFirstMs, r.FanOutLastMs = distOf(first), distOf(lastMs)
	run.Logf("registry: fan-out to the last of %d caches p50 %.1f ms p99 %.1f ms", s.Caches, r.FanOutLastMs.P50, r.FanOutLastMs.P99)

	// The same registrations on a service nobody watches.
	meter = newPhaseMeter(run.Members, workers)
	if err := registerMany(ctx, d, "unwatched", "u", s.Instances, s.Registrars); err != nil {
		return r, err
	}
	r.Unwatched = meter.done(s.Instances)

	// Idle, last, once the servers' JIT and the caches have settled: what
	// the servers burn with every session connected and nothing changing,
	// taken off each phase.
	meter = newPhaseMeter(run.Members, workers)
	select {
	case <-time.After(time.Duration(s.IdleSeconds * float64(time.Second))):
	case <-ctx.Done():
		return r, ctx.Err()
	}
	r.Idle = meter.done(0)
	rate := max(r.Idle.ServerCPUSeconds, 0) / r.Idle.Seconds
	for _, p := range []*RegistryPhase{&r.Bulk, &r.Sampled, &r.Unwatched} {
		p.IdleCPUSeconds = rate * p.Seconds
	}
	run.Logf("registry: idle servers use %.0f%% of a core", 100*rate)
	if _, err := all(workerCmd{Op: "close"}); err != nil {
		return r, err
	}
	return r, nil
}

// registryWorkerProc is a worker process and its pipes.
type registryWorkerProc struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
	done chan struct{}
}

func startRegistryWorkers(run RegistryRun, base, service string, s RegistrySettings) ([]*registryWorkerProc, error) {
	var out []*registryWorkerProc
	for i := range s.Procs {
		cfg, err := json.Marshal(registryWorkerConfig{Index: i, Servers: run.Servers, Base: base, Service: service, Caches: s.Caches / s.Procs})
		if err != nil {
			return out, err
		}
		cmd := run.Worker()
		cmd.Env = append(os.Environ(), RegistryWorkerEnv+"="+string(cfg))
		cmd.Stderr = os.Stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			return out, err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return out, err
		}
		if err := cmd.Start(); err != nil {
			return out, fmt.Errorf("registry worker: %w", err)
		}
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		out = append(out, &registryWorkerProc{cmd: cmd, in: in, out: sc, done: make(chan struct{})})
	}
	return out, nil
}

// ask sends cmd and reads the answer.
func (w *registryWorkerProc) ask(cmd workerCmd) (workerReply, error) {
	var rep workerReply
	b, _ := json.Marshal(cmd)
	if _, err := w.in.Write(append(b, '\n')); err != nil {
		return rep, fmt.Errorf("registry worker %d: %w", w.cmd.Process.Pid, err)
	}
	if !w.out.Scan() {
		return rep, fmt.Errorf("registry worker %d: no answer to %s: %v", w.cmd.Process.Pid, cmd.Op, w.out.Err())
	}
	if err := json.Unmarshal(w.out.Bytes(), &rep); err != nil {
		return rep, err
	}
	if rep.Err != "" {
		return rep, fmt.Errorf("registry worker %d: %s: %s", w.cmd.Process.Pid, cmd.Op, rep.Err)
	}
	return rep, nil
}

// stop closes the worker's stdin, which ends it, and waits; a worker that
// does not end within a minute is killed.
func (w *registryWorkerProc) stop() {
	_ = w.in.Close()
	go func() {
		_ = w.cmd.Wait()
		close(w.done)
	}()
	select {
	case <-w.done:
	case <-time.After(time.Minute):
		_ = w.cmd.Process.Kill()
		<-w.done
	}
}

func askAll(ctx context.Context, workers []*registryWorkerProc, cmd workerCmd) ([]workerReply, error) {
	reps := make([]workerReply, len(workers))
	g, _ := errgroup.WithContext(ctx)
	for i, w := range workers {
		g.Go(func() (err error) {
			reps[i], err = w.ask(cmd)
			return err
		})
	}
	return reps, g.Wait()
}

// phaseMeter reads the servers' CPU and counters, and the workers' CPU,
// at the start of a phase.
type phaseMeter struct {
	members []RegistryMember
	workers []*registryWorkerProc
	began   time.Time
	cpu     time.Duration
	client  time.Duration
	ctr     ServerCounters
}

func newPhaseMeter(members []RegistryMember, workers []*registryWorkerProc) *phaseMeter {
	m := &phaseMeter{members: members, workers: workers}
	m.cpu, m.client, m.ctr = m.read()
	m.began = time.Now()
	return m
}

func (m *phaseMeter) read() (server, client time.Duration, ctr ServerCounters) {
	for _, mb := range m.members {
		cpu := ProcessCPUOf(mb.Pid)
		if cpu < 0 || server < 0 {
			server = -1
		} else {
			server += cpu
		}
		c, err := ReadServerCounters(mb.Addr)
		if err == nil {
			ctr = ServerCounters{Reads: ctr.Reads + c.Reads, Writes: ctr.Writes + c.Writes,
				Notifications: ctr.Notifications + c.Notifications, Packets: ctr.Packets + c.Packets}
		}
	}
	for _, w := range m.workers {
		client += max(ProcessCPUOf(w.cmd.Process.Pid), 0)
	}
	return server, client, ctr
}

func (m *phaseMeter) done(registrations int) RegistryPhase {
	cpu, client, ctr := m.read()
	p := RegistryPhase{Registrations: registrations, Seconds: time.Since(m.began).Seconds(),
		ServerCPUSeconds: -1, Counters: ctr.Sub(m.ctr), ClientCPUSeconds: (client - m.client).Seconds()}
	if cpu >= 0 && m.cpu >= 0 {
		p.ServerCPUSeconds = (cpu - m.cpu).Seconds()
	}
	return p
}

// registerMany registers n instances of service with ids prefix-UUID,
// from workers goroutines.
func registerMany(ctx context.Context, d *discovery.Discovery, service, prefix string, n, workers int) error {
	var next atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	for range workers {
		g.Go(func() error {
			for {
				k := int(next.Add(1)) - 1
				if k >= n {
					return nil
				}
				if err := d.Register(gctx, registryInstance(service, newUUID(), k)); err != nil {
					return fmt.Errorf("register %s #%d: %w", prefix, k, err)
				}
			}
		})
	}
	return g.Wait()
}

// registryInstance is an instance as a Spring Cloud or Dubbo service
// registers it: a random UUID for id, an address and a port, a URI spec.
func registryInstance(service, id string, k int) discovery.Instance {
	port := 8000 + k%1000
	spec, _ := discovery.ParseURISpec("{scheme}://{address}:{port}")
	return discovery.Instance{Name: service, ID: id, Address: fmt.Sprintf("10.%d.%d.%d", k>>16&255, k>>8&255, k&255),
		Port: &port, URISpec: spec}
}

// newUUID is a random (version 4) UUID, as Curator gives an instance
// without an id.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// sizes returns one instance node's data size and the size of the
// service's listing as the getChildren reply carries it.
func sizes(ctx context.Context, c *framework.Client, dir string) (node, listing int, err error) {
	children, _, err := c.Children(ctx, dir)
	if err != nil {
		return 0, 0, err
	}
	listing = 4
	for _, ch := range children {
		listing += 4 + len(ch)
	}
	if len(children) == 0 {
		return 0, listing, nil
	}
	data, _, err := c.Get(ctx, framework.JoinPath(dir, children[0]))
	return len(data), listing, err
}

// serverWatches is the server's watch total (wchs).
func serverWatches(addr string) (int, error) {
	text, err := fourLetter(addr, "wchs")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Total watches:"); ok {
			var n int
			if _, err := fmt.Sscan(v, &n); err != nil {
				return 0, fmt.Errorf("wchs %q: %w", text, err)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("wchs %s: no total in %q", addr, text)
}
