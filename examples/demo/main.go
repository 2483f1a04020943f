// Command demo runs the job runner example as several OS processes against
// one ZooKeeper. It shows who holds the scheduler lock and the job slots,
// the hand-overs and their fencing tokens, and the connection states of
// every process, each with the session it concerns. It then injects
// failures, says what to expect, and after each one says what happened:
//
//   - it kills the process that holds the scheduler lock (SIGKILL): the lock
//     passes on once the server expires the dead session;
//   - it cuts every job runner's connection to ZooKeeper for 1.5s, through a
//     fault proxy (zktest.Proxy), shorter than the 3.6s in which a client
//     gives up a session it cannot reach (90% of the 4s session timeout,
//     counted from its last answered request): every process goes
//     Suspended, gives up what it holds (connstate.StandardPolicy), and is
//     Reconnected on the same session;
//   - it stops ZooKeeper for 5.5s, longer than the session timeout: every
//     process reports Lost, naming the session, on its own while the server
//     is still down (client-side expiry), then Reconnected on a new session.
//
// A ZooKeeper stop is not used for the short outage: the server's stop and
// its JVM's start add one to two seconds to the time the clients cannot
// reach it, so a "1.5s" stop left them unreachable for 3 to 3.5s, at the
// edge of the 3.6s, and sessions were lost or kept by chance.
//
// Finally it stops every process with SIGINT, checks that fencing tokens
// grew on every hand-over, prints a summary (which says which sessions were
// lost, and in which outage) and exits 0. It needs no terminal and
// finishes on its own in about 40 seconds.
//
// It starts a throwaway ZooKeeper with package zktest (make demo installs
// one when missing) unless ZK_SERVERS names servers to use; the outages are
// skipped then.
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
	var (
		srv   *zktest.Server
		proxy *zktest.Proxy
	)
	if servers == "" {
		say("starting a throwaway ZooKeeper (zktest.Launch)")
		var err error
		srv, err = zktest.Launch()
		if err != nil {
			say("cannot start ZooKeeper: %v", err)
			return 1
		}
		defer srv.Close()
		say("ZooKeeper serving on %s", srv.ConnectString())
		proxy, err = zktest.ListenProxy(srv.Addr())
		if err != nil {
			say("cannot start the fault proxy: %v", err)
			return 1
		}
		defer proxy.Close()
		servers = proxy.Addr()
		say("the job runners connect through a fault proxy on %s, which the demo can cut", servers)
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
	d.script(ctx, srv, proxy)

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
func (d *demo) script(ctx context.Context, srv *zktest.Server, proxy *zktest.Proxy) {
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
	giveUp := session * 9 / 10
	say("cutting every job runner's connection to ZooKeeper for %v (zktest.Proxy.Cut), less than the %v in which a client gives up a session it cannot reach (90%% of the %v timeout, counted from its last answered request): expect Suspended, holds ended (StandardPolicy), then Reconnected on the same session", cut, giveUp, session)
	cutName := fmt.Sprintf("the %v cut", cut)
	mark := d.tr.mark(cutName)
	proxy.Cut()
	if !sleep(ctx, cut) {
		proxy.Restore()
		return
	}
	proxy.Restore()
	say("restoring the connections")
	if !d.outcome(ctx, mark, cutName, false) {
		return
	}

	if !sleep(ctx, 4*time.Second) {
		return
	}
	say("stopping ZooKeeper for %v, more than the session timeout: expect Lost, naming the session, while it is still down (client-side expiry, %v after the last answered request), then Reconnected on a new session", stop, giveUp)
	mark = d.tr.mark("the ZooKeeper stop")
	down := time.Now()
	if err := srv.Stop(); err != nil {
		say("stop: %v", err)
	}
	d.tr.serverDown(true)
	sleep(ctx, stop)
	say("restarting ZooKeeper")
	if err := srv.Restart(); err != nil {
		say("restart: %v", err)
	}
	d.tr.serverDown(false)
	say("ZooKeeper serving again, %.1fs after its stop began", time.Since(down).Seconds())
	if !d.outcome(ctx, mark, "the ZooKeeper stop", true) {
		return
	}
	sleep(ctx, 3*time.Second)
}

// The outages.
const (
	cut  = 1500 * time.Millisecond // the connections cut through the proxy
	stop = 5500 * time.Millisecond // ZooKeeper stopped, Stop's return to Restart's call
)

// outcome waits until every live job runner has reconnected since mark and
// says what each one's session went through in the outage, and whether
// that is what was announced (lose: every session lost; else every one
// kept). It reports whether ctx is still live.
func (d *demo) outcome(ctx context.Context, mark int, outage string, lose bool) bool {
	ids, ok := d.tr.awaitReconnected(ctx, mark, 20*time.Second)
	if ctx.Err() != nil {
		say("interrupted")
		return false
	}
	expected := true
	for _, id := range ids {
		o := d.tr.outcomeSince(mark, id)
		say("  %s", o.describe(id))
		if len(o.lost) > 0 != lose || o.unknown > 0 {
			expected = false
		}
	}
	switch {
	case !ok:
		say("after %s: not every job runner reconnected within 20s", outage)
	case expected && lose:
		say("after %s: as announced, every job runner lost its session and got a new one", outage)
	case expected:
		say("after %s: as announced, every job runner kept its session", outage)
	default:
		say("after %s: NOT as announced (see the lines above)", outage)
	}
	return true
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
	say("  sessions lost: %s", t.lostSummaryLocked())
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

// lostSummaryLocked names every session a job runner printed Lost for,
// grouped by the outage it came in.
func (t *tracker) lostSummaryLocked() string {
	var phases []string
	byPhase := map[string][]string{}
	n := 0
	for _, e := range t.conns {
		if e.state != "Lost" {
			continue
		}
		n++
		if _, ok := byPhase[e.phase]; !ok {
			phases = append(phases, e.phase)
		}
		s := e.session
		if s == "" {
			s = "a session it did not name"
		}
		byPhase[e.phase] = append(byPhase[e.phase], e.id+" "+s)
	}
	if n == 0 {
		return "none"
	}
	var parts []string
	for _, p := range phases {
		where := "in " + p
		if p == "" {
			where = "outside the outages"
		}
		if len(phases) == 1 {
			where = "all " + where
		} else {
			where = fmt.Sprintf("%d %s", len(byPhase[p]), where)
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", where, strings.Join(byPhase[p], ", ")))
	}
	return fmt.Sprintf("%d, %s", n, strings.Join(parts, "; "))
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

	// The connection lines, in the order they came, for what each outage
	// did to each session.
	conns      []connEvent
	connsMoved chan struct{} // closed and replaced at each connection line
	phase      string        // the outage under way, "" between them
	down       bool          // ZooKeeper is stopped
	alive      map[string]bool
}

// connEvent is one connection line of a job runner.
type connEvent struct {
	id, state string
	session   string // "0x...", "" when the line names none
	same      bool   // Reconnected on the same session
	phase     string // the outage under way when it came
	down      bool   // it came while ZooKeeper was stopped
}

func newTracker() *tracker {
	return &tracker{
		changed: make(chan struct{}), running: map[string]int{}, states: map[string]int{},
		connsMoved: make(chan struct{}), alive: map[string]bool{},
	}
}

var (
	acquiredRe = regexp.MustCompile(`scheduler: acquired lock, fencing token (\d+)`)
	stateRe    = regexp.MustCompile(`connection: (\w+)`)
	sessionRe  = regexp.MustCompile(`session (0x[0-9a-f]+)`)
)

// mark starts an outage called phase and returns the position of the next
// connection line, for awaitReconnected and outcomeSince.
func (t *tracker) mark(phase string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.phase = phase
	return len(t.conns)
}

func (t *tracker) serverDown(down bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.down = down
}

// awaitReconnected waits up to d until every live job runner has printed
// Reconnected since mark, and returns the live ones, sorted; ok is false if
// d passed first. It ends the outage started by mark.
func (t *tracker) awaitReconnected(ctx context.Context, mark int, d time.Duration) (ids []string, ok bool) {
	timeout := time.After(d)
	defer func() {
		t.mu.Lock()
		t.phase = ""
		t.mu.Unlock()
	}()
	for {
		t.mu.Lock()
		ids = ids[:0]
		done := true
		for id, alive := range t.alive {
			if !alive {
				continue
			}
			ids = append(ids, id)
			if !t.reconnectedLocked(mark, id) {
				done = false
			}
		}
		ch := t.connsMoved
		t.mu.Unlock()
		sort.Strings(ids)
		if done {
			return ids, true
		}
		select {
		case <-ch:
		case <-timeout:
			return ids, false
		case <-ctx.Done():
			return ids, false
		}
	}
}

func (t *tracker) reconnectedLocked(mark int, id string) bool {
	for _, e := range t.conns[mark:] {
		if e.id == id && e.state == "Reconnected" {
			return true
		}
	}
	return false
}

// outage is what one outage did to one job runner's session.
type outage struct {
	before        string   // the session when the outage began
	lost          []string // the sessions it printed Lost for
	lostWhileDown int      // of those, how many while ZooKeeper was stopped
	unknown       int      // Lost lines that name no session
	after         string   // the session it reconnected on
	same          bool     // and it said that was the same session
	suspended     bool
}

// outcomeSince reads id's connection lines from mark on.
func (t *tracker) outcomeSince(mark int, id string) outage {
	t.mu.Lock()
	defer t.mu.Unlock()
	var o outage
	for _, e := range t.conns[:mark] {
		if e.id == id && e.session != "" && e.state != "Lost" {
			o.before = e.session
		}
	}
	for _, e := range t.conns[mark:] {
		if e.id != id {
			continue
		}
		switch e.state {
		case "Suspended":
			o.suspended = true
		case "Lost":
			if e.session == "" {
				o.unknown++
			} else {
				o.lost = append(o.lost, e.session)
			}
			if e.down {
				o.lostWhileDown++
			}
		case "Reconnected":
			if o.after == "" {
				o.after, o.same = e.session, e.same
			}
		}
	}
	return o
}

// describe says in one line what the outage did to id's session.
func (o outage) describe(id string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ", id)
	if o.suspended {
		b.WriteString("Suspended, ")
	}
	switch {
	case len(o.lost) > 0:
		fmt.Fprintf(&b, "Lost session %s", strings.Join(o.lost, ", "))
		if o.lostWhileDown == len(o.lost) {
			b.WriteString(" while ZooKeeper was down (its own client gave it up)")
		}
		b.WriteString(", ")
	case o.unknown > 0:
		b.WriteString("Lost a session it did not name, ")
	}
	switch {
	case o.after == "":
		b.WriteString("not reconnected yet")
	case o.same:
		fmt.Fprintf(&b, "Reconnected on the same session %s", o.after)
	default:
		fmt.Fprintf(&b, "Reconnected on a new session %s", o.after)
	}
	return b.String()
}

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
		state := stateRe.FindStringSubmatch(line)[1]
		t.states[state]++
		e := connEvent{id: id, state: state, phase: t.phase, down: t.down}
		if m := sessionRe.FindStringSubmatch(line); m != nil {
			e.session = m[1]
		}
		e.same = strings.Contains(line, "same session")
		t.conns = append(t.conns, e)
		if state == "Connected" {
			t.alive[id] = true
		}
		close(t.connsMoved)
		t.connsMoved = make(chan struct{})
	}
}

// exited forgets what a process that is gone was running.
func (t *tracker) exited(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.running[id] = 0
	t.clearScheduler(id)
	t.alive[id] = false
	close(t.connsMoved)
	t.connsMoved = make(chan struct{})
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
