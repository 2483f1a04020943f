package javabench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gocurator/curator/internal/curatorjava"
)

// Config configures one run of Bench.java.
type Config struct {
	// ConnectString is the ZooKeeper connect string.
	ConnectString string
	// Path is the lock path; "/curatorjava-bench/<Workload>" if empty.
	Path string
	// Workload is "mutex" (InterProcessMutex), "read" or "write" (the read
	// or write lock of InterProcessReadWriteLock), "semv2"
	// (InterProcessSemaphoreV2 with MaxLeases leases) or "election" (a
	// LeaderLatch per cycle: start, await, hold, close; its latencies are
	// the fail-over, from the previous leader's close to await's return).
	Workload string
	// Clients is the number of Curator clients (ZooKeeper sessions), one
	// worker thread each unless PerClient says more.
	Clients int
	// PerClient is the number of worker threads per client, each with an
	// InterProcessMutex (or lock, or semaphore) of its own on the shared
	// client; 0 or 1 for one.
	PerClient int
	// MaxLeases is the number of leases of the semv2 semaphore; 1 if zero.
	MaxLeases int
	// Hold is how long a worker holds the lock (or lease) before it
	// releases it: the critical section. 0 releases at once.
	Hold time.Duration
	// Warmup is run but not measured (JIT compilation, node creation).
	// Measure only; a Run's caller times its phases itself.
	Warmup time.Duration
	// Measure is the measured period; the function Measure needs it
	// positive.
	Measure time.Duration
	// Stderr receives the JVM's stderr if non-nil; otherwise its tail is
	// included in the error of a failed run.
	Stderr io.Writer
	// Latencies makes Wait return every measured latency in
	// Result.Latencies, for a caller that merges several JVMs' runs.
	Latencies bool
}

// Result is the JSON line printed by Bench.java. Latencies are those of
// acquire, from the call until the lock (or lease) is held.
type Result struct {
	Workload   string  `json:"workload"`
	Clients    int     `json:"clients"`
	MaxLeases  int     `json:"max_leases"`
	Ops        int64   `json:"ops"`        // acquire+release cycles completed in the measured period
	Seconds    float64 `json:"seconds"`    // length of the measured period
	Throughput float64 `json:"throughput"` // Ops per second
	P50Ms      float64 `json:"p50_ms"`
	P90Ms      float64 `json:"p90_ms"`
	P99Ms      float64 `json:"p99_ms"`
	MaxMs      float64 `json:"max_ms"`
	MeanMs     float64 `json:"mean_ms"`
	// Latencies is every measured latency, sorted, with Config.Latencies.
	Latencies []time.Duration `json:"-"`
}

// Point is what the JVM reports when it switches phase.
type Point struct {
	// CPU is the JVM's process CPU time so far (user and system, every
	// thread: Curator's, ZooKeeper's client threads, the JIT and the GC),
	// from com.sun.management.OperatingSystemMXBean; -1 if unavailable.
	CPU time.Duration
	// Cycles is how many acquire+release cycles completed in the phase
	// that just ended.
	Cycles int64
}

// benchJVMOptions: full tiered compilation, since throughput is measured.
// ZooKeeper 3.8's ClientCnxn logs a harmless stack trace at WARN for every
// client it closes; the benchmark closes one per worker, so that logger is
// limited to ERROR here.
var benchJVMOptions = []string{
	"-Xms256m",
	"-Xmx512m",
	"-Dorg.slf4j.simpleLogger.log.org.apache.zookeeper.ClientCnxn=error",
}

// readyTimeout bounds the JVM's start plus connecting every client.
const readyTimeout = 2 * time.Minute

// phaseTimeout bounds the JVM's answer to a phase command.
const phaseTimeout = 30 * time.Second

// Run is a running Bench.java whose phases the caller drives: after Start
// the workers loop (warm-up); Phase("measure") starts the measured period,
// Phase("count") ends it while the loop goes on, and Phase("stop") ends the
// run, after which Wait returns the result. Its methods must be called from
// one goroutine.
type Run struct {
	cfg    Config
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *curatorjava.TailBuffer
	lines  chan string // stdout, line by line; closed at EOF
	failed chan string // the FAILED line of a worker, once
	once   sync.Once
	cancel context.CancelFunc
	// latFile receives the latencies with Config.Latencies; "" without.
	latFile string
}

// Start starts Bench.java with cfg and returns once every client is
// connected and the workers loop. Cancelling ctx kills the JVM. Errors wrap
// curatorjava.ErrNotInstalled when Java or the Curator jars are missing.
func Start(ctx context.Context, cfg Config) (*Run, error) {
	switch cfg.Workload {
	case "mutex", "read", "write", "semv2", "election":
	default:
		return nil, fmt.Errorf("javabench: unknown workload %q (want mutex, read, write, semv2 or election)", cfg.Workload)
	}
	if cfg.ConnectString == "" {
		return nil, errors.New("javabench: Config.ConnectString is empty")
	}
	if cfg.Clients < 1 {
		return nil, fmt.Errorf("javabench: Config.Clients = %d, want >= 1", cfg.Clients)
	}
	if cfg.Hold < 0 {
		return nil, fmt.Errorf("javabench: Config.Hold = %v, want >= 0", cfg.Hold)
	}
	if cfg.MaxLeases == 0 {
		cfg.MaxLeases = 1
	}
	if cfg.MaxLeases < 0 {
		return nil, fmt.Errorf("javabench: Config.MaxLeases = %d, want >= 1", cfg.MaxLeases)
	}
	if cfg.Path == "" {
		cfg.Path = "/curatorjava-bench/" + cfg.Workload
	}
	args := []string{cfg.ConnectString, cfg.Path, cfg.Workload,
		strconv.Itoa(cfg.Clients), strconv.Itoa(cfg.MaxLeases),
		strconv.FormatFloat(float64(cfg.Hold)/float64(time.Millisecond), 'f', -1, 64)}
	if cfg.PerClient > 1 {
		args = append(args, strconv.Itoa(cfg.PerClient))
	}
	jvmOptions := benchJVMOptions
	var latFile string
	if cfg.Latencies {
		f, err := os.CreateTemp("", "javabench-latencies-*")
		if err != nil {
			return nil, fmt.Errorf("javabench: %w", err)
		}
		latFile = f.Name()
		_ = f.Close()
		jvmOptions = append(slices.Clip(jvmOptions), "-Dbench.latencies="+latFile)
	}
	ctx, cancel := context.WithCancel(ctx)
	cmd, err := curatorjava.Command(ctx, sources, "javabench.Bench", jvmOptions, args...)
	if err != nil {
		cancel()
		removeFile(latFile)
		return nil, err
	}
	cmd.WaitDelay = 5 * time.Second
	r := &Run{cfg: cfg, cmd: cmd, latFile: latFile, stderr: curatorjava.NewTailBuffer(64 << 10),
		lines: make(chan string, 16), failed: make(chan string, 1), cancel: cancel}
	if cfg.Stderr != nil {
		cmd.Stderr = cfg.Stderr
	} else {
		cmd.Stderr = r.stderr
	}
	if r.stdin, err = cmd.StdinPipe(); err != nil {
		cancel()
		return nil, fmt.Errorf("javabench: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, fmt.Errorf("javabench: %w", err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("javabench: start %s: %w", cmd.Path, err)
	}
	go r.read(stdout)
	if _, err := r.await("READY", readyTimeout); err != nil {
		r.kill()
		return nil, err
	}
	return r, nil
}

// read splits stdout into lines; a worker's FAILED line also goes to
// failed, so a wait for anything else ends at once.
func (r *Run) read(stdout io.Reader) {
	defer close(r.lines)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if msg, ok := strings.CutPrefix(line, "FAILED "); ok {
			select {
			case r.failed <- msg:
			default:
			}
			continue
		}
		r.lines <- line
	}
}

// await returns the next stdout line that starts with prefix; other lines
// are skipped.
func (r *Run) await(prefix string, timeout time.Duration) (string, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case line, ok := <-r.lines:
			if !ok {
				return "", r.exitError(fmt.Errorf("exited before %q", prefix))
			}
			if strings.HasPrefix(line, prefix) {
				return line, nil
			}
		case msg := <-r.failed:
			return "", r.exitError(fmt.Errorf("worker failed: %s", msg))
		case <-t.C:
			return "", r.exitError(fmt.Errorf("no %q within %v", prefix, timeout))
		}
	}
}

func (r *Run) exitError(err error) error {
	return fmt.Errorf("javabench: %s: %w\nstderr:\n%s", r.cfg.Workload, err, r.stderr.String())
}

// Phase switches the JVM to phase ("measure", "count" or "stop") and
// returns its CPU time and the cycles of the phase that ended.
func (r *Run) Phase(phase string) (Point, error) {
	switch phase {
	case "measure", "count", "stop":
	default:
		return Point{}, fmt.Errorf("javabench: unknown bench phase %q", phase)
	}
	if _, err := io.WriteString(r.stdin, phase+"\n"); err != nil {
		return Point{}, r.exitError(fmt.Errorf("phase %s: %w", phase, err))
	}
	line, err := r.await("AT "+phase+" ", phaseTimeout)
	if err != nil {
		return Point{}, err
	}
	f := strings.Fields(line)
	if len(f) != 4 {
		return Point{}, r.exitError(fmt.Errorf("phase %s answered %q", phase, line))
	}
	cpu, err1 := strconv.ParseInt(f[2], 10, 64)
	cycles, err2 := strconv.ParseInt(f[3], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return Point{}, r.exitError(fmt.Errorf("phase %s answered %q: %w", phase, line, err))
	}
	return Point{CPU: time.Duration(cpu), Cycles: cycles}, nil
}

// Wait waits for the result printed after Phase("stop") and for the JVM to
// exit.
func (r *Run) Wait() (Result, error) {
	defer r.kill()
	line, err := r.await("{", phaseTimeout+r.cfg.Hold)
	if err != nil {
		return Result{}, err
	}
	var res Result
	if err := json.Unmarshal([]byte(line), &res); err != nil {
		return Result{}, r.exitError(fmt.Errorf("output %q: %w", line, err))
	}
	_ = r.stdin.Close()
	for range r.lines {
	}
	if err := r.cmd.Wait(); err != nil {
		return Result{}, r.exitError(err)
	}
	if r.latFile != "" {
		if res.Latencies, err = readLatencies(r.latFile); err != nil {
			return Result{}, r.exitError(err)
		}
	}
	return res, nil
}

// readLatencies reads Bench.java's latency file: nanoseconds, one a line.
func readLatencies(file string) ([]time.Duration, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	fields := strings.Fields(string(b))
	out := make([]time.Duration, len(fields))
	for i, f := range fields {
		ns, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("latencies %s: %w", file, err)
		}
		out[i] = time.Duration(ns)
	}
	return out, nil
}

func removeFile(name string) {
	if name != "" {
		_ = os.Remove(name)
	}
}

// Close ends the JVM if it still runs; after Wait it does nothing.
func (r *Run) Close() { r.kill() }

func (r *Run) kill() {
	r.once.Do(func() {
		_ = r.stdin.Close()
		r.cancel()
		go func() {
			for range r.lines {
			}
		}()
		_ = r.cmd.Wait()
		removeFile(r.latFile)
	})
}

// Measure runs Bench.java with cfg, timing its phases itself (cfg.Warmup
// unmeasured, then cfg.Measure measured), and returns its result.
// Cancelling ctx kills the JVM. Errors wrap curatorjava.ErrNotInstalled
// when Java or the Curator jars are missing.
func Measure(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Warmup < 0 || cfg.Measure <= 0 {
		return Result{}, fmt.Errorf("javabench: need Warmup >= 0 and Measure > 0, got %v and %v", cfg.Warmup, cfg.Measure)
	}
	r, err := Start(ctx, cfg)
	if err != nil {
		return Result{}, err
	}
	defer r.Close()
	for _, step := range []struct {
		wait  time.Duration
		phase string
	}{{cfg.Warmup, "measure"}, {cfg.Measure, "stop"}} {
		select {
		case <-time.After(step.wait):
		case <-ctx.Done():
			return Result{}, fmt.Errorf("javabench: %w", ctx.Err())
		}
		if _, err := r.Phase(step.phase); err != nil {
			return Result{}, err
		}
	}
	return r.Wait()
}
