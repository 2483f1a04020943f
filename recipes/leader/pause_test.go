//go:build unix

package leader_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/leader"
)

// pauseSession is the paused leader's session timeout: short, so that a
// pause past the server's expiry of it is short too.
const pauseSession = 2 * time.Second

// Issue 33, item 8: a leader stopped (SIGSTOP, a long GC pause) for longer
// than its session timeout found Term.Done closed at the first look after
// the resume, but the ctx Run gave fn still open: it closed 37-38 ms later,
// in 2 of 2 pauses, when a goroutine woke to cancel it. Code reads
// ctx.Done(), so every context the election hands out (fn's, and
// Term.Context) must answer from the session's deadline at the first look:
// Done closed, Err set, and context.Cause the term's loss (its session).
// So must a context derived from one of them after the pause; one derived
// before the pause is closed at once when its parent, or its term, is
// looked at (the context package registers it as a child, no goroutine in
// between).
//
// The paused leader is this test binary run again (pausedLeader), so that
// the test process can stop it with SIGSTOP: one client campaigns with Run,
// another with Campaign twice, so that each look is the first look at its
// term after the pause.
func TestFirstLookAfterPauseClosesContexts(t *testing.T) {
	if os.Getenv(pausedAddrEnv) != "" {
		pausedLeader(t)
		return
	}
	t.Parallel()
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	p := startPaused(t, ns)
	var leading pauseReport
	p.report(t, "leading", &leading)
	if n := ownedNodes(t, c, leading); n != len(leading.Nodes) {
		t.Fatalf("%d of the leader's %d nodes on the server before the pause", n, len(leading.Nodes))
	}

	p.signal(t, syscall.SIGSTOP)
	stopped := time.Now()
	// The server expires a session no sooner than the client-side
	// deadline, which counts from the send of the last answered request:
	// once the nodes are gone, the deadline has passed.
	testkit.Eventually(t, "the server expired the stopped leader's sessions (their nodes gone)", func() bool {
		return ownedNodes(t, c, leading) == 0
	})
	p.send(t, "check\n")
	p.signal(t, syscall.SIGCONT)
	var looked firstLooks
	p.report(t, "looked", &looked)
	p.wait(t)

	t.Logf("stopped %v (session timeout %v): %+v", time.Since(stopped).Round(time.Millisecond), leading.Timeout, looked)
	if !looked.TermDoneFirst {
		t.Errorf("Term.Done open at the first look after the pause")
	}
	for _, l := range []struct {
		what string
		ctxLook
	}{
		{"Run's fn ctx", looked.Fn},
		{"a ctx derived from fn's after the pause", looked.FnLate},
		{"a ctx derived from fn's before the pause", looked.FnEarly},
		{"Term.Context()", looked.Term},
		{"a ctx derived from Term.Context() after the pause", looked.TermLate},
		{"a ctx derived from Term.Context() before the pause", looked.TermEarly},
		{"a ctx derived from Term.Context() before the pause, Term.Done looked at first", looked.DoneFirstEarly},
	} {
		if !l.Done {
			t.Errorf("%s: Done open at the first look after the pause (closed %v after the resume)", l.what, l.DoneAfter)
		}
		if !l.Canceled {
			t.Errorf("%s: Err = %q at the first look, want context.Canceled", l.what, l.Err)
		}
		if !l.CauseLost {
			t.Errorf("%s: Cause = %q at the first look, want the term's loss (ErrLeadershipLost, ErrSessionLost)", l.what, l.Cause)
		}
	}
}

// pauseReport is what the paused leader prints once it leads.
type pauseReport struct {
	Sessions []int64
	Nodes    []string // Nodes[i] belongs to Sessions[i]
	Timeout  time.Duration
}

// ctxLook is one context as the paused leader saw it at its first look
// after the resume.
type ctxLook struct {
	Done      bool // a non-blocking select on Done found it closed
	Err       string
	Canceled  bool // Err is context.Canceled
	Cause     string
	CauseLost bool // context.Cause is the loss of the term's session
	// DoneAfter is when Done closed after the resume, if not at once (0:
	// not within a session timeout).
	DoneAfter time.Duration
}

// firstLooks is what the paused leader prints after its first looks.
type firstLooks struct {
	Fn, FnLate, FnEarly       ctxLook
	Term, TermLate, TermEarly ctxLook
	// A third term, looked at through Term.Done first, then through a ctx
	// derived from its Context before the pause.
	TermDoneFirst  bool
	DoneFirstEarly ctxLook
}

// lookAt looks at ctx once: Done first, as code that selects on it does.
func lookAt(ctx context.Context) ctxLook {
	var l ctxLook
	select {
	case <-ctx.Done():
		l.Done = true
	default:
	}
	if err := ctx.Err(); err != nil {
		l.Err, l.Canceled = err.Error(), errors.Is(err, context.Canceled)
	}
	if cause := context.Cause(ctx); cause != nil {
		l.Cause = cause.Error()
		l.CauseLost = errors.Is(cause, leader.ErrLeadershipLost) && errors.Is(cause, leader.ErrSessionLost)
	}
	return l
}

// pausedLeader is the process the test stops: it leads two elections on
// two clients (Run on one, Campaign on the other), reports, and waits for
// a line on stdin, which the test writes while the process is stopped. The
// first thing it does on reading it is look at the contexts.
func pausedLeader(t *testing.T) {
	ns := os.Getenv(pausedNSEnv)
	ctx := testkit.Ctx(t)
	c1 := testkit.Connect(t, zkAddr, ns, framework.WithSessionTimeout(pauseSession))
	c2 := testkit.Connect(t, zkAddr, ns, framework.WithSessionTimeout(pauseSession))

	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	fnCtxs := make(chan context.Context, 1)
	ran := make(chan error, 1)
	go func() {
		ran <- leader.New(c1, "/run").Run(runCtx, func(fctx context.Context) error {
			select {
			case fnCtxs <- fctx: // the first term's only
			default:
			}
			<-fctx.Done()
			return fctx.Err()
		})
	}()
	var fctx context.Context
	select {
	case fctx = <-fnCtxs:
	case <-ctx.Done():
		t.Fatal("Run's fn never called")
	}
	fnEarly, cancel := context.WithTimeout(fctx, time.Hour)
	defer cancel()
	term, err := leader.New(c2, "/campaign").Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tctx := term.Context()
	termEarly, cancel := context.WithTimeout(tctx, time.Hour)
	defer cancel()
	term3, err := leader.New(c2, "/campaign3").Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	doneFirstEarly, cancel := context.WithTimeout(term3.Context(), time.Hour)
	defer cancel()
	printReport(t, "leading", pauseReport{
		Sessions: []int64{c1.SessionID(), c2.SessionID(), c2.SessionID()},
		Nodes:    []string{leader.FromContext(fctx).Node(), term.Node(), term3.Node()},
		Timeout:  c1.SessionTimeout(),
	})

	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		t.Fatalf("read the test's line: %v", err)
	}
	resumed := time.Now()
	var looks firstLooks
	looks.Fn = lookAt(fctx)
	fnLate, cancel := context.WithTimeout(fctx, time.Hour)
	defer cancel()
	looks.FnLate = lookAt(fnLate)
	looks.FnEarly = lookAt(fnEarly)
	looks.Term = lookAt(tctx)
	termLate, cancel := context.WithTimeout(tctx, time.Hour)
	defer cancel()
	looks.TermLate = lookAt(termLate)
	looks.TermEarly = lookAt(termEarly)
	select {
	case <-term3.Done():
		looks.TermDoneFirst = true
	default:
	}
	looks.DoneFirstEarly = lookAt(doneFirstEarly)

	// Then, for the report, when each closed if not at once.
	for _, w := range []struct {
		l   *ctxLook
		ctx context.Context
	}{
		{&looks.Fn, fctx}, {&looks.FnLate, fnLate}, {&looks.FnEarly, fnEarly},
		{&looks.Term, tctx}, {&looks.TermLate, termLate}, {&looks.TermEarly, termEarly},
		{&looks.DoneFirstEarly, doneFirstEarly},
	} {
		if w.l.Done {
			continue
		}
		timer := time.NewTimer(pauseSession)
		select {
		case <-w.ctx.Done():
			w.l.DoneAfter = time.Since(resumed)
		case <-timer.C:
		}
		timer.Stop()
	}
	stopRun()
	if err := <-ran; !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want context.Canceled", err)
	}
	_ = term.Resign(ctx)
	_ = term3.Resign(ctx)
	printReport(t, "looked", looks)
}

// printReport prints rep as one line, "<tag> <json>", for the test.
func printReport(t *testing.T, tag string, rep any) {
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("%s %s\n", tag, b)
}

// ownedNodes counts the paused leader's nodes the server has, owned by
// their sessions.
func ownedNodes(t *testing.T, c *framework.Client, rep pauseReport) int {
	t.Helper()
	n := 0
	for i, node := range rep.Nodes {
		st, err := c.Exists(testkit.Ctx(t), node)
		if err != nil {
			t.Fatalf("exists %s: %v", node, err)
		}
		if st != nil && st.EphemeralOwner == rep.Sessions[i] {
			n++
		}
	}
	return n
}

// pausedProc is the paused leader's process, seen from the test.
type pausedProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout output
	stderr output
	exited chan struct{} // closed once the process is reaped, err set
	err    error
}

// startPaused runs this test binary again as the paused leader of the
// running test, in namespace ns of the test's server. It is killed at
// cleanup if still running, and the namespace is deleted after it.
func startPaused(t *testing.T, ns string) *pausedProc {
	t.Helper()
	root := testkit.Connect(t, zkAddr, "")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testkit.Deadline)
		defer cancel()
		if err := root.Delete(ctx, "/"+ns, framework.DeletingChildren(), framework.Quietly()); err != nil {
			t.Errorf("delete the namespace: %v", err)
		}
	})
	cmd := exec.Command(os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.timeout=2m")
	cmd.Env = append(os.Environ(), pausedAddrEnv+"="+zkAddr, pausedNSEnv+"="+ns)
	p := &pausedProc{cmd: cmd, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &p.stdout, &p.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.stdin = stdin
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
			return
		default:
		}
		_ = cmd.Process.Kill() // SIGKILL ends a stopped process too
		select {
		case <-p.exited:
		case <-time.After(testkit.Deadline):
			t.Errorf("paused leader %d not reaped after SIGKILL", cmd.Process.Pid)
		}
	})
	return p
}

// report waits for the paused leader's report tagged tag and decodes it
// into rep.
func (p *pausedProc) report(t *testing.T, tag string, rep any) {
	t.Helper()
	timer := time.NewTimer(testkit.Deadline)
	defer timer.Stop()
	exited := false
	for {
		out, more := p.stdout.next()
		for _, line := range strings.Split(out, "\n") {
			if js, ok := strings.CutPrefix(line, tag+" "); ok {
				if err := json.Unmarshal([]byte(js), rep); err != nil {
					t.Fatalf("paused leader's %s report %q: %v", tag, js, err)
				}
				return
			}
		}
		if exited {
			t.Fatalf("paused leader exited (%v) without its %s report:\n%s", p.err, tag, p)
		}
		select {
		case <-more:
		case <-p.exited:
			exited = true // one more look: Wait has copied all the output
		case <-timer.C:
			t.Fatalf("no %s report from the paused leader:\n%s", tag, p)
		}
	}
}

// signal sends sig to the paused leader.
func (p *pausedProc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("%v to the paused leader: %v", sig, err)
	}
}

// send writes line to the paused leader's stdin (into the pipe's buffer:
// the process may be stopped).
func (p *pausedProc) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.stdin, line); err != nil {
		t.Fatalf("write to the paused leader: %v", err)
	}
}

// wait waits for the paused leader to exit, and fails unless it
// succeeded.
func (p *pausedProc) wait(t *testing.T) {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(testkit.Deadline):
		t.Fatalf("paused leader still running:\n%s", p)
	}
	if p.err != nil {
		t.Fatalf("paused leader: %v\n%s", p.err, p)
	}
}

func (p *pausedProc) String() string {
	out, _ := p.stdout.next()
	errs, _ := p.stderr.next()
	return "stdout:\n" + out + "stderr:\n" + errs
}

// output collects a process's output and tells a waiter when more comes.
type output struct {
	mu   sync.Mutex
	b    []byte
	more chan struct{} // closed at the next write, if made
}

func (o *output) Write(b []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.b = append(o.b, b...)
	if o.more != nil {
		close(o.more)
		o.more = nil
	}
	return len(b), nil
}

// next returns the output so far and a channel closed at the next write.
func (o *output) next() (string, <-chan struct{}) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.more == nil {
		o.more = make(chan struct{})
	}
	return string(o.b), o.more
}
