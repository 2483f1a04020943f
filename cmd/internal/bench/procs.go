package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// sessionEnv, when set in the environment to a sessionSpec in JSON, makes
// the binary serve one session of a multi-process run (Config.Procs)
// instead of doing what it was started for: the parent re-executes itself
// once per session, so that each session's goroutines have a process, a
// scheduler and a garbage collector of their own, as separate clients do.
const sessionEnv = "CURATORBENCH_SESSION"

// sessionSpec is what a child session runs.
type sessionSpec struct {
	Servers    string        `json:"servers"`
	Path       string        `json:"path"`
	Workload   string        `json:"workload"`
	Impl       string        `json:"impl"`
	PerSession int           `json:"per_session"`
	MaxLeases  int           `json:"max_leases"`
	Hold       time.Duration `json:"hold"`
}

// sessionResult is a child's last line: the acquire latencies of its
// measured cycles.
type sessionResult struct {
	LatNs []int64 `json:"lat_ns"`
}

// ServeSessionIfAsked serves the session sessionEnv asks for, if it is set,
// and reports whether it did; a failure exits with status 1. A command
// that runs multi-process workloads calls it first thing in main (and a
// test package in TestMain). The protocol on stdin and stdout is
// Bench.java's: READY once the workers loop, one "AT <phase> <cpuNanos>
// <cycles> <mallocs>" answer per phase command (measure, count, stop), a
// "FAILED <why>" line as soon as a worker fails, then the result in JSON.
func ServeSessionIfAsked() bool {
	spec := os.Getenv(sessionEnv)
	if spec == "" {
		return false
	}
	if err := serveSession(context.Background(), spec, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "curatorbench session:", err)
		os.Exit(1)
	}
	return true
}

// lockedWriter serialises the lines of the phase answers and of a
// worker's failure.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) line(format string, args ...any) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := fmt.Fprintf(l.w, format+"\n", args...)
	return err
}

var phaseNames = map[string]int32{"measure": phaseMeasure, "count": phaseCount, "stop": phaseStop}

func serveSession(ctx context.Context, specJSON string, in io.Reader, out io.Writer) error {
	var s sessionSpec
	if err := json.Unmarshal([]byte(specJSON), &s); err != nil {
		return fmt.Errorf("%s: %w", sessionEnv, err)
	}
	wl, ok := Lookup(s.Workload, s.Impl)
	if !ok {
		return fmt.Errorf("%s: no workload %s/%s in this binary", sessionEnv, s.Workload, s.Impl)
	}
	cfg := Config{Servers: s.Servers, Path: s.Path, Clients: 1, PerSession: s.PerSession, MaxLeases: s.MaxLeases, Hold: s.Hold}
	lockers, closeAll, err := newLockers(ctx, cfg, wl)
	defer closeAll()
	if err != nil {
		return err
	}
	runtime.GC()
	l := startLoop(ctx, cfg, wl, lockers)
	w := &lockedWriter{w: out}
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-l.failed():
			// The parent waits on stdout: tell it at once.
			_ = w.line("FAILED %s", strings.ReplaceAll(l.failure.Error(), "\n", " "))
		case <-done:
		}
	}()
	if err := w.line("READY"); err != nil {
		_, _ = l.stop()
		return err
	}
	sc := bufio.NewScanner(in)
	stopped := false
	for !stopped && sc.Scan() {
		word := strings.TrimSpace(sc.Text())
		ph, ok := phaseNames[word]
		if !ok {
			continue
		}
		p, err := l.switchTo(ph)
		if err != nil {
			break // the failure goroutine reports it
		}
		if err := w.line("AT %s %d %d %d", word, int64(p.cpu), p.cycles, p.mallocs); err != nil {
			break
		}
		stopped = ph == phaseStop
	}
	lat, err := l.stop()
	if err != nil {
		return err
	}
	if !stopped {
		return errors.New("stdin closed before stop")
	}
	res := sessionResult{LatNs: make([]int64, len(lat))}
	for i, d := range lat {
		res.LatNs[i] = int64(d)
	}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return w.line("%s", b)
}

// childTimeout bounds a child's start (connecting its workers) and its
// answer to a phase command.
const childTimeout = time.Minute

// child is one session's process, seen from the parent.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *tailWriter
	lines  chan string // stdout, line by line; closed at EOF
	failed chan string // a FAILED line, once
}

// startChild re-executes this binary as a session serving spec.
func startChild(ctx context.Context, spec sessionSpec) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("session process: %w", err)
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), sessionEnv+"="+string(b))
	cmd.WaitDelay = 5 * time.Second
	c := &child{cmd: cmd, stderr: &tailWriter{max: 16 << 10}, lines: make(chan string, 16), failed: make(chan string, 1)}
	cmd.Stderr = c.stderr
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("session process: start %s: %w", exe, err)
	}
	go c.read(stdout)
	return c, nil
}

// read splits stdout into lines of any length (the result is one line);
// a FAILED line goes to failed.
func (c *child) read(stdout io.Reader) {
	defer close(c.lines)
	r := bufio.NewReader(stdout)
	for {
		line, err := r.ReadString('\n')
		line = strings.TrimSuffix(line, "\n")
		if msg, ok := strings.CutPrefix(line, "FAILED "); ok {
			select {
			case c.failed <- msg:
			default:
			}
		} else if line != "" {
			c.lines <- line
		}
		if err != nil {
			return
		}
	}
}

// await returns the next stdout line that starts with prefix.
func (c *child) await(prefix string, timeout time.Duration) (string, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				return "", c.errorf("exited before %q", prefix)
			}
			if strings.HasPrefix(line, prefix) {
				return line, nil
			}
		case msg := <-c.failed:
			return "", c.errorf("worker failed: %s", msg)
		case <-t.C:
			return "", c.errorf("no %q within %v", prefix, timeout)
		}
	}
}

func (c *child) errorf(format string, args ...any) error {
	return fmt.Errorf("session process %d: %s; stderr: %s", c.cmd.Process.Pid, fmt.Sprintf(format, args...), c.stderr.String())
}

// close closes the child's stdin, which ends it (after its result, or
// at once if it was not stopped), and reaps it; a child that does not end
// within childTimeout is killed.
func (c *child) close() {
	_ = c.stdin.Close()
	go func() {
		for range c.lines {
		}
	}()
	done := make(chan struct{})
	go func() {
		_ = c.cmd.Wait()
		close(done)
	}()
	t := time.NewTimer(childTimeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		_ = c.cmd.Process.Kill()
		<-done
	}
}

// children drives the session processes of a run as one loop: a phase
// switch goes to all of them, and their counts add up.
type children struct {
	cs     []*child
	failCh chan struct{}
}

func (cc children) switchTo(phase int32) (point, error) {
	p := point{at: time.Now(), hasMallocs: true}
	word := map[int32]string{phaseMeasure: "measure", phaseCount: "count", phaseStop: "stop"}[phase]
	// Every child gets the command before any answer is read, so that
	// the switches are as close in time as the pipes allow.
	for _, c := range cc.cs {
		if _, err := io.WriteString(c.stdin, word+"\n"); err != nil {
			return p, c.errorf("phase %s: %v", word, err)
		}
	}
	for _, c := range cc.cs {
		line, err := c.await("AT "+word+" ", childTimeout)
		if err != nil {
			return p, err
		}
		f := strings.Fields(line)
		if len(f) != 5 {
			return p, c.errorf("phase %s answered %q", word, line)
		}
		cpu, e1 := strconv.ParseInt(f[2], 10, 64)
		cycles, e2 := strconv.ParseInt(f[3], 10, 64)
		mallocs, e3 := strconv.ParseUint(f[4], 10, 64)
		if err := errors.Join(e1, e2, e3); err != nil {
			return p, c.errorf("phase %s answered %q: %v", word, line, err)
		}
		if cpu < 0 || p.cpu < 0 {
			p.cpu = -1
		} else {
			p.cpu += time.Duration(cpu)
		}
		p.cycles += cycles
		p.mallocs += mallocs
	}
	return p, nil
}

func (cc children) failed() <-chan struct{} { return cc.failCh }

// runProcs is runMetered with every session in a child process.
func runProcs(ctx context.Context, cfg Config, wl Workload) ([]time.Duration, window, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	spec := sessionSpec{Servers: cfg.Servers, Path: cfg.Path, Workload: wl.Name, Impl: wl.Impl,
		PerSession: max(cfg.PerSession, 1), MaxLeases: cfg.MaxLeases, Hold: cfg.Hold}
	cc := children{failCh: make(chan struct{})}
	defer func() {
		for _, c := range cc.cs {
			c.close()
		}
	}()
	for range cfg.Clients {
		c, err := startChild(ctx, spec)
		if err != nil {
			return nil, window{}, fmt.Errorf("%s: %w", wl.Label(), err)
		}
		cc.cs = append(cc.cs, c)
	}
	for _, c := range cc.cs {
		if _, err := c.await("READY", childTimeout); err != nil {
			return nil, window{}, fmt.Errorf("%s: %w", wl.Label(), err)
		}
	}
	// A child's failure ends the wait of a phase at once.
	var once sync.Once
	for _, c := range cc.cs {
		go func() {
			select {
			case msg := <-c.failed:
				// Put it back for the next await to report.
				c.failed <- msg
				once.Do(func() { close(cc.failCh) })
			case <-ctx.Done():
			}
		}()
	}
	w, err := drive(ctx, cfg, cc)
	if err != nil {
		if errors.Is(err, errLoopFailed) {
			err = firstFailure(cc.cs)
		}
		return nil, window{}, fmt.Errorf("%s: %w", wl.Label(), err)
	}
	var mu sync.Mutex
	var lat []time.Duration
	var g errgroup.Group
	for _, c := range cc.cs {
		g.Go(func() error {
			line, err := c.await("{", childTimeout+cfg.Hold)
			if err != nil {
				return err
			}
			var res sessionResult
			if err := json.Unmarshal([]byte(line), &res); err != nil {
				return c.errorf("result: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, ns := range res.LatNs {
				lat = append(lat, time.Duration(ns))
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, window{}, fmt.Errorf("%s: %w", wl.Label(), err)
	}
	return lat, w, nil
}

// firstFailure is the failure a child reported.
func firstFailure(cs []*child) error {
	for _, c := range cs {
		select {
		case msg := <-c.failed:
			return c.errorf("worker failed: %s", msg)
		default:
		}
	}
	return errLoopFailed
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}
