// Command demo runs the job runner example as several OS processes against
// one ZooKeeper. It shows who holds the scheduler lock and the job slots,
// the hand-overs and their fencing tokens, and the connection states of
// every process as they change. It then injects failures:
//
//   - it kills the process that holds the scheduler lock (SIGKILL): the lock
//     passes on once the server expires the dead session;
//   - it stops ZooKeeper for 1.5s, shorter than the session timeout: every
//     process goes Suspended, gives up what it holds (connstate.StandardPolicy),
//     and is Reconnected on the same session;
//   - it stops ZooKeeper for longer than the session timeout: every process
//     reports Lost on its own while the server is still down (client-side
//     expiry), then Reconnected on a new session.
//
// Finally it stops every process with SIGINT, checks that fencing tokens
// grew on every hand-over, prints a summary and exits 0. It needs no
// terminal and finishes on its own in about half a minute.
//
// It starts a throwaway ZooKeeper with package zktest (make demo installs
// one when missing) unless ZK_SERVERS names servers to use; the ZooKeeper
// outages are skipped then.
//
//	go run ./examples/demo
//	ZK_SERVERS=127.0.0.1:2181 go run ./examples/demo
package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/zktest"
)

// The demo's settings, passed to every job runner.
const (
	slots   = 2               // -k: jobs running at once, cluster-wide
	session = 4 * time.Second // -session: short, so a killed holder's lock moves on soon
	term    = 4 * time.Second // -term: a scheduler hands over after this long
)

func main() { os.Exit(run()) }

var outMu sync.Mutex

// say prints a line of the demo itself, in the job runners' format.
func say(format string, args ...any) {
	outMu.Lock()
	defer outMu.Unlock()
	fmt.Printf("%s *** %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// 1. ZooKeeper.
	servers := os.Getenv("ZK_SERVERS")
	var srv *zktest.Server
	if servers == "" {
		say("starting a throwaway ZooKeeper (zktest.Launch)")
		var err error
		srv, err = zktest.Launch()
		if err != nil {
			say("cannot start ZooKeeper: %v", err)
			return 1
		}
		defer srv.Close()
		servers = srv.ConnectString()
		say("ZooKeeper serving on %s", servers)
	} else {
		say("using ZooKeeper at ZK_SERVERS=%s; the ZooKeeper outages are skipped", servers)
	}

	// 2. The job runner binary.
	dir, err := os.MkdirTemp("", "gocurator-demo-")
	if err != nil {
		say("%v", err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin, err := build(ctx, dir)
	if err != nil {
		say("cannot build the job runner: %v", err)
		return 1
	}

	// A fresh root per run, so that runs against a shared server never see
	// each other's jobs.
	root := fmt.Sprintf("/gocurator-demo-%d", time.Now().UnixNano())
	say("legend: 'scheduler' lines are about the mutex at %s/scheduler (one holder at a time);", root)
	say("        'worker' lines about the semaphore at %s/slots (at most %d leases at once);", root, slots)
	say("        'connection' lines are each process's connection states. Session timeout %v.", session)

	d := &demo{bin: bin, servers: servers, root: root, tr: newTracker()}
	for _, id := range []string{"a", "b", "c"} {
		if err := d.start(id); err != nil {
			say("cannot start job runner %s: %v", id, err)
			d.stopAll()
			return 1
		}
	}

	// 3. The script.
	d.script(ctx, srv)

	// 4. Stop everything.
	say("stopping every job runner with SIGINT")
	d.stopAll()
	if os.Getenv("ZK_SERVERS") != "" {
		cleanUp(servers, root)
	}
	return d.summary()
}

// build compiles the job runner example into dir with the go command.
func build(ctx context.Context, dir string) (string, error) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("the go command is needed to build the job runner: %w", err)
	}
	bin := filepath.Join(dir, "jobrunner")
	say("building the job runner: go build -o %s ./examples/jobrunner", bin)
	cmd := exec.CommandContext(ctx, goCmd, "build", "-o", bin, "github.com/gocurator/curator/examples/jobrunner")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%w (run the demo from inside the gocurator module: make demo)", err)
	}
	return bin, nil
}

// script is the demo's timeline, from the start of the job runners.
func (d *demo) script(ctx context.Context, srv *zktest.Server) {
	if !sleep(ctx, 5*time.Second) {
		return
	}
	// Kill the scheduler, as a crash would: no release, its session lives
	// on the server until it expires.
	victim := d.tr.awaitScheduler(ctx, 3*time.Second)
	if victim == "" {
		say("no process holds the scheduler lock right now; killing nobody")
	} else {
		say("killing %s, the scheduler, with SIGKILL: its lock node stays until the server expires its session (%v)", victim, session)
		d.kill(victim)
	}
	if !sleep(ctx, time.Second) {
		return
	}
	say("starting d to replace it")
	if err := d.start("d"); err != nil {
		say("cannot start d: %v", err)
	}

	if srv == nil {
		sleep(ctx, 15*time.Second)
		return
	}

	if !sleep(ctx, 4*time.Second) {
		return
	}
	say("stopping ZooKeeper for 1.5s, less than the session timeout: expect Suspended, holds ended (StandardPolicy), Reconnected on the same session")
	if err := srv.Stop(); err != nil {
		say("stop: %v", err)
	}
	sleep(ctx, 1500*time.Millisecond)
	say("restarting ZooKeeper")
	if err := srv.Restart(); err != nil {
		say("restart: %v", err)
	}

	if !sleep(ctx, 5*time.Second) {
		return
	}
	say("stopping ZooKeeper for 5.5s, more than the session timeout: expect Lost while it is still down (client-side expiry), then Reconnected on a new session")
	if err := srv.Stop(); err != nil {
		say("stop: %v", err)
	}
	sleep(ctx, 5500*time.Millisecond)
	say("restarting ZooKeeper")
	if err := srv.Restart(); err != nil {
		say("restart: %v", err)
	}
	sleep(ctx, 5*time.Second)
}

// sleep waits d or until ctx ends; it reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		say("interrupted")
		return false
	}
}

// demo runs the job runner processes.
type demo struct {
	bin, servers, root string
	tr                 *tracker

	mu    sync.Mutex
	procs []*proc
}

type proc struct {
	id     string
	cmd    *exec.Cmd
	done   chan struct{} // closed when the process has exited and its output is read
	err    error
	killed bool
}

// start starts the job runner id; its output goes to the terminal and the
// tracker, line by line.
func (d *demo) start(id string) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd := exec.Command(d.bin,
		"-zk", d.servers, "-id", id, "-k", strconv.Itoa(slots), "-root", d.root,
		"-session", session.String(), "-term", term.String())
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return err
	}
	w.Close()
	p := &proc{id: id, cmd: cmd, done: make(chan struct{})}
	d.mu.Lock()
	d.procs = append(d.procs, p)
	d.mu.Unlock()
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			line := sc.Text()
			outMu.Lock()
			fmt.Println(line)
			outMu.Unlock()
			d.tr.line(id, line)
		}
		r.Close()
		p.err = cmd.Wait()
		d.tr.exited(id)
		close(p.done)
	}()
	return nil
}

func (d *demo) kill(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range d.procs {
		if p.id == id {
			p.killed = true
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
}

// stopAll sends SIGINT to every live process and waits for them; after 15s
// it kills what is left.
func (d *demo) stopAll() {
	d.mu.Lock()
	procs := append([]*proc(nil), d.procs...)
	d.mu.Unlock()
	for _, p := range procs {
		if !p.killed {
			_ = p.cmd.Process.Signal(os.Interrupt)
		}
	}
	deadline := time.After(15 * time.Second)
	for _, p := range procs {
		select {
		case <-p.done:
		case <-deadline:
			say("%s did not stop within 15s; killing it", p.id)
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
}

// cleanUp deletes the demo's tree from a server the demo did not start.
func cleanUp(servers, root string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := framework.Connect(ctx, servers)
	if err != nil {
		say("clean-up: %v", err)
		return
	}
	defer c.Close()
	if err := c.Delete(ctx, root, framework.DeletingChildren(), framework.Quietly()); err != nil {
		say("clean-up of %s: %v", root, err)
		return
	}
	say("deleted %s", root)
}

// summary prints what happened and returns the exit code: 0 unless an
// invariant was broken or a job runner failed.
func (d *demo) summary() int {
	t := d.tr
	t.mu.Lock()
	defer t.mu.Unlock()
	code := 0
	say("summary")
	increasing := sort.SliceIsSorted(t.tokens, func(i, j int) bool { return t.tokens[i] < t.tokens[j] })
	for i := 1; i < len(t.tokens); i++ {
		if t.tokens[i] <= t.tokens[i-1] {
			increasing = false
		}
	}
	verdict := "yes"
	if !increasing {
		verdict = "NO"
		code = 1
	}
	say("  scheduler terms: %d, fencing tokens in grant order: %s", len(t.tokens), shortList(t.tokens))
	say("  fencing tokens grew on every hand-over: %s", verdict)
	say("  scheduler locks lost to the connection: %d; fenced writes refused: %d", t.schedLost, t.refused)
	say("  jobs finished: %d; abandoned and left queued for others: %d; leases lost: %d",
		t.finished, t.abandoned, t.leasesLost)
	say("  most jobs running at once, as printed: %d (limit %d)", t.peak, slots)
	states := make([]string, 0, len(t.states))
	for s, n := range t.states {
		states = append(states, fmt.Sprintf("%s %d", s, n))
	}
	sort.Strings(states)
	say("  connection states seen: %s", strings.Join(states, ", "))
	d.mu.Lock()
	defer d.mu.Unlock()
	var exits []string
	for _, p := range d.procs {
		switch {
		case p.killed:
			exits = append(exits, p.id+": killed by the demo")
		case p.err != nil:
			exits = append(exits, fmt.Sprintf("%s: %v", p.id, p.err))
			code = 1
		default:
			exits = append(exits, p.id+": exit 0")
		}
	}
	say("  processes: %s", strings.Join(exits, ", "))
	if code == 0 {
		say("demo finished")
	} else {
		say("demo finished with errors")
	}
	return code
}

func shortList(xs []int64) string {
	var parts []string
	for _, x := range xs {
		parts = append(parts, strconv.FormatInt(x, 10))
	}
	return strings.Join(parts, " < ")
}

// tracker reads the job runners' output to know who holds what.
type tracker struct {
	mu         sync.Mutex
	scheduler  string // id of the process that holds the scheduler lock, "" if none
	changed    chan struct{}
	tokens     []int64
	running    map[string]int // jobs running per process
	peak       int
	finished   int
	abandoned  int
	leasesLost int
	schedLost  int
	refused    int
	states     map[string]int
}

func newTracker() *tracker {
	return &tracker{changed: make(chan struct{}), running: map[string]int{}, states: map[string]int{}}
}

var (
	acquiredRe = regexp.MustCompile(`scheduler: acquired lock, fencing token (\d+)`)
	stateRe    = regexp.MustCompile(`connection: (\w+)`)
)

func (t *tracker) line(id, line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case acquiredRe.MatchString(line):
		tok, _ := strconv.ParseInt(acquiredRe.FindStringSubmatch(line)[1], 10, 64)
		t.tokens = append(t.tokens, tok)
		t.setScheduler(id)
	case strings.Contains(line, "scheduler: released lock"):
		t.clearScheduler(id)
	case strings.Contains(line, "scheduler: LOST"):
		t.schedLost++
		t.clearScheduler(id)
	case strings.Contains(line, "REFUSED"):
		t.refused++
	case strings.Contains(line, ": RUNNING "):
		t.running[id]++
		total := 0
		for _, n := range t.running {
			total += n
		}
		t.peak = max(t.peak, total)
	case strings.Contains(line, ": finished "):
		t.running[id]--
		t.finished++
	case strings.Contains(line, ": LOST the lease"):
		t.leasesLost++
		if strings.Contains(line, "abandoning") {
			t.running[id]--
			t.abandoned++
		}
	case strings.Contains(line, ": shutting down: abandoning"):
		t.running[id]--
		t.abandoned++
	case stateRe.MatchString(line):
		t.states[stateRe.FindStringSubmatch(line)[1]]++
	}
}

// exited forgets what a process that is gone was running.
func (t *tracker) exited(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.running[id] = 0
	t.clearScheduler(id)
}

func (t *tracker) setScheduler(id string) {
	t.scheduler = id
	close(t.changed)
	t.changed = make(chan struct{})
}

func (t *tracker) clearScheduler(id string) {
	if t.scheduler == id {
		t.setScheduler("")
	}
}

// awaitScheduler returns the current scheduler, waiting up to d for one.
func (t *tracker) awaitScheduler(ctx context.Context, d time.Duration) string {
	timeout := time.After(d)
	for {
		t.mu.Lock()
		s, ch := t.scheduler, t.changed
		t.mu.Unlock()
		if s != "" {
			return s
		}
		select {
		case <-ch:
		case <-timeout:
			return ""
		case <-ctx.Done():
			return ""
		}
	}
}
