package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/zktest"
)

// The exec workload's nodes: the lock gocurator exec holds, and one parent
// per round for the heartbeats of its command's process tree and the
// markers of the next holder and of gocurator's exit.
const (
	execLock  = Root + "/exec/lock"
	execBeats = Root + "/exec/beats"
)

// execGrace is gocurator exec's --grace. A silent partition is noticed
// after the client's read timeout (2/3 of the session timeout), so with a
// grace under a third of it the tree is gone before the server can expire
// gocurator's session and let the next holder in.
const execGrace = 500 * time.Millisecond

// execTree is the command gocurator exec runs: a shell that starts a beat
// writer in the background (a grandchild of gocurator) and a nested shell
// that ignores SIGTERM and runs a second one (which ignores it too), and
// waits for both. Neither beat writer ever exits by itself while its round
// lasts: only the hold's end may stop them.
const execTree = `"$CHAOS_BEAT" -zk "$CHAOS_ZK" -parent "$CHAOS_BEATS" -role bg &
sh -c 'trap "" TERM; "$CHAOS_BEAT" -zk "$CHAOS_ZK" -parent "$CHAOS_BEATS" -role nested -ignore-term'
wait`

// tools are gocurator, the beat writer and the queue consumer, built into a directory of
// their own by one go build (the import paths resolve from anywhere in the
// repository, through its go.work or the tools module).
type tools struct {
	done            chan struct{}
	dir             string
	gocurator, beat string
	qconsume        string // the queue workload's consumer process
	err             error
}

// buildTools starts the build; wait for it with wait.
func buildTools(ctx context.Context) *tools {
	t := &tools{done: make(chan struct{})}
	go func() {
		defer close(t.done)
		t.dir, t.err = os.MkdirTemp("", "chaos-tools-")
		if t.err != nil {
			return
		}
		// The go on PATH: the one running the tests (go test puts its
		// GOROOT/bin first).
		cmd := exec.CommandContext(ctx, "go", "build", "-o", t.dir+string(os.PathSeparator),
			"github.com/gocurator/curator/cmd/gocurator", "github.com/gocurator/curator/cmd/internal/chaos/beat",
			"github.com/gocurator/curator/cmd/internal/chaos/qconsume")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.err = fmt.Errorf("chaos: build gocurator, beat and qconsume: %v: %s", err, out)
			return
		}
		t.gocurator, t.beat = filepath.Join(t.dir, "gocurator"), filepath.Join(t.dir, "beat")
		t.qconsume = filepath.Join(t.dir, "qconsume")
	}()
	return t
}

func (t *tools) wait() error {
	<-t.done
	return t.err
}

// remove waits for the build and removes what it made.
func (t *tools) remove() {
	<-t.done
	if t.dir != "" {
		os.RemoveAll(t.dir)
	}
}

// execRunner runs the exec workload's rounds one after another: one
// gocurator exec at a time, through proxies of its own, and the next
// holder on a client of the harness's, connected directly.
type execRunner struct {
	bin, beat string
	dir       string          // for gocurator's output files
	servers   string          // the ensemble, directly: for the beats and break
	proxies   []*zktest.Proxy // gocurator's, one per server
	c         *framework.Client
	st        time.Duration
	rng       *rand.Rand
	rec       *recorder
	logf      func(string, ...any)
}

func newExecRunner(ctx context.Context, cfg Config, ens *zktest.Ensemble, t *tools) (*execRunner, error) {
	if err := t.wait(); err != nil {
		return nil, err
	}
	x := &execRunner{bin: t.gocurator, beat: t.beat, dir: t.dir, servers: ens.ConnectString(), st: cfg.SessionTimeout,
		rng: rand.New(rand.NewSource(cfg.Seed - 1)), logf: cfg.Logf}
	for _, s := range ens.Servers() {
		p, err := zktest.ListenProxy(s.Addr())
		if err != nil {
			x.close()
			return nil, err
		}
		x.proxies = append(x.proxies, p)
	}
	c, err := framework.Connect(ctx, ens.ConnectString(), framework.WithSessionTimeout(cfg.SessionTimeout),
		framework.WithRetryPolicy(retry.BoundedExponentialBackoff(50*time.Millisecond, time.Second, 30)),
		framework.WithConnectionTimeout(2*cfg.SessionTimeout))
	if err != nil {
		x.close()
		return nil, fmt.Errorf("chaos: connect the exec workload's client: %w", err)
	}
	x.c = c
	return x, nil
}

func (x *execRunner) close() {
	if x.c != nil {
		x.c.Close()
	}
	for _, p := range x.proxies {
		p.Close()
	}
}

func (x *execRunner) run(ctx context.Context) {
	for n := 0; ctx.Err() == nil; n++ {
		r := x.round(ctx, n, ExecLosses[n%len(ExecLosses)])
		x.rec.execRound(r)
		x.logf("exec round %d (%s): %s", n, r.Loss, r.summary())
		sleep(ctx, time.Second+time.Duration(x.rng.Int63n(int64(time.Second))))
	}
}

// summary is a round's log line.
func (r ExecRound) summary() string {
	if r.Err != "" {
		return "not carried out: " + r.Err
	}
	return fmt.Sprintf("token %d, %d beats (%d after the next holder's first write, %d after exit), survivors %v, "+
		"gocurator exited %v after the loss with %d", r.Token, r.Beats, r.AfterNext, r.AfterExit, r.Survivors,
		r.Exited.Round(time.Millisecond), r.ExitCode)
}

// nextHold is what the next holder of the exec lock did.
type nextHold struct {
	token int64
	seq   int64 // of its marker under the round's parent
	err   error
}

// round runs one round: gocurator exec holds the lock and runs the tree;
// once the tree beats, another holder queues for the lock and the hold is
// ended by loss; then the OS and the server are asked what outlived it. A
// round once started runs to its end (at most a few session timeouts), so
// that it leaves no process behind.
func (x *execRunner) round(ctx context.Context, n int, loss string) (r ExecRound) {
	r = ExecRound{Round: n, Loss: loss}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 12*x.st)
	defer cancel()
	parent := fmt.Sprintf("%s/r%d", execBeats, n)
	// The round's directory is this round's alone: "node exists" is our
	// own create, applied with its reply lost (a fault) and retried. It
	// is used, and deleted at the end, like one that answered.
	if _, err := x.c.Create(rctx, parent, nil, framework.CreatingParents()); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		r.Err = fmt.Sprintf("create %s: %v", parent, err)
		return r
	}
	defer func() {
		// A beat in flight as its writer was killed may still land
		// between the listing and the delete: try again. A fault may
		// be under way (an ensemble restart takes some 12s to heal):
		// keep trying as long as a round may last, or the round's
		// directory is left for the end-state check to find.
		dctx, cancel := context.WithTimeout(context.Background(), 12*x.st)
		defer cancel()
		for dctx.Err() == nil {
			err := x.c.Delete(dctx, parent, framework.DeletingChildren())
			if err == nil || errors.Is(err, zk.ErrNoNode) {
				return
			}
			x.logf("exec round %d: delete %s: %v", n, parent, err)
			sleep(dctx, 100*time.Millisecond)
		}
	}()

	out, err := os.Create(filepath.Join(x.dir, fmt.Sprintf("exec-%d.out", n)))
	if err != nil {
		r.Err = err.Error()
		return r
	}
	defer os.Remove(out.Name())
	defer out.Close()
	var addrs []string
	for _, p := range x.proxies {
		addrs = append(addrs, p.Addr())
	}
	// Output to a file, not a pipe: with a pipe, Wait would wait for the
	// tree's processes too (they inherit it), not for gocurator.
	cmd := exec.Command(x.bin, "--zk", strings.Join(addrs, ","), "--session-timeout", x.st.String(),
		"--timeout", (2 * x.st).String(), "exec", "--grace", execGrace.String(), execLock, "--", "sh", "-c", execTree)
	cmd.Env = append(os.Environ(), "CHAOS_BEAT="+x.beat, "CHAOS_ZK="+x.servers, "CHAOS_BEATS="+parent)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		r.Err = fmt.Sprintf("start gocurator: %v", err)
		return r
	}
	exited := make(chan struct{})
	var exitedAt time.Time
	var werr error
	go func() {
		werr = cmd.Wait()
		exitedAt = time.Now()
		close(exited)
	}()
	var tree []proc
	pgrp := 0
	defer func() {
		// Whatever happened, nothing of this round may go on running.
		_ = cmd.Process.Kill()
		<-exited
		killTree(tree, pgrp)
		if b, err := os.ReadFile(out.Name()); err == nil && r.Err != "" {
			r.Err += "; gocurator: " + lastLine(string(b))
		}
	}()

	// The tree beats: both writers are up, their token is the hold's.
	beats, err := x.awaitBeats(rctx, parent, exited)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	r.Token, pgrp = beats[0].token, beats[0].pgrp
	tree = x.treeOf(beats)

	// The next holder queues behind gocurator.
	next := make(chan nextHold, 1)
	go func() { next <- x.nextHolder(rctx, parent) }()

	r.Start = time.Now()
	switch loss {
	case ExecCut:
		cutAll(x.proxies, "")
	case ExecSilent:
		for _, p := range x.proxies {
			p.BlackHole()
		}
	case ExecBreak:
		if err := x.breakHolder(rctx); err != nil {
			r.Err = err.Error()
			return r
		}
	}
	heal := func() {
		for _, p := range x.proxies {
			p.Restore()
		}
	}
	defer heal()

	// gocurator's exit, then at once the OS's view and a marker write: a
	// beat the server ordered after the marker was written after gocurator
	// had exited.
	select {
	case <-exited:
	case <-time.After(3*x.st + execGrace):
		r.Hung = true
		_ = cmd.Process.Kill()
		<-exited
	}
	r.Exited = exitedAt.Sub(r.Start)
	r.ExitCode = exitStatus(werr)
	seen := map[int]bool{}
	for _, p := range tree {
		if p.alive() {
			r.Survivors = append(r.Survivors, p.String())
			seen[p.pid] = true
		}
	}
	if pgrp > 1 && pgrp != syscall.Getpgrp() {
		for _, p := range groupMembers(pgrp) {
			if !seen[p.pid] {
				r.Survivors = append(r.Survivors, p.String())
			}
		}
	}
	marker, err := x.c.Create(rctx, parent+"/x-", nil, framework.WithMode(framework.PersistentSequential))
	if err != nil {
		r.Err = fmt.Sprintf("exit marker: %v", err)
		return r
	}
	exitSeq, _ := seqOf(marker)
	heal()

	// The next holder writes; only then is what outlived gocurator
	// killed, so that its beats after the next holder's write are counted.
	nh := <-next
	if nh.err != nil {
		r.Err = fmt.Sprintf("next holder: %v", nh.err)
	}
	r.NextToken = nh.token
	killTree(tree, pgrp)

	kids, _, err := x.c.Children(rctx, parent)
	if err != nil {
		r.Err = fmt.Sprintf("read beats: %v", err)
		return r
	}
	for _, k := range kids {
		b, ok := parseBeat(k)
		if !ok || b.token != r.Token {
			continue
		}
		r.Beats++
		if b.seq > exitSeq {
			r.AfterExit++
		}
		if nh.err == nil && b.seq > nh.seq {
			r.AfterNext++
		}
	}
	return r
}

// killTree SIGKILLs what is left of a tree, its group too if it has one of
// its own, and waits (a little) for its processes to die.
func killTree(tree []proc, pgrp int) {
	if pgrp > 1 && pgrp != syscall.Getpgrp() {
		_ = syscall.Kill(-pgrp, syscall.SIGKILL)
	}
	for _, p := range tree {
		p.kill()
	}
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		alive := false
		for _, p := range tree {
			alive = alive || p.alive()
		}
		if !alive {
			return
		}
	}
}

// awaitBeats waits for beats of both writers of the tree and returns them.
func (x *execRunner) awaitBeats(ctx context.Context, parent string, exited <-chan struct{}) ([]beat, error) {
	ctx, cancel := context.WithTimeout(ctx, 4*x.st)
	defer cancel()
	for {
		kids, _, err := x.c.Children(ctx, parent)
		if err == nil {
			var bs []beat
			roles := map[string]bool{}
			for _, k := range kids {
				if b, ok := parseBeat(k); ok && !roles[b.role] {
					roles[b.role] = true
					bs = append(bs, b)
				}
			}
			if len(bs) == 2 {
				return bs, nil
			}
		}
		select {
		case <-exited:
			return nil, errors.New("gocurator exited before the tree beat")
		case <-ctx.Done():
			return nil, fmt.Errorf("the tree did not beat within %v", 4*x.st)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// treeOf returns the tree's processes: the beat writers and their parents
// (the outer shell, of the background writer; the nested shell), read while
// they run.
func (x *execRunner) treeOf(bs []beat) []proc {
	var tree []proc
	seen := map[int]bool{}
	for _, b := range bs {
		p, ok := readProc(b.pid)
		if !ok {
			continue
		}
		for _, q := range []int{p.pid, p.ppid} {
			if seen[q] {
				continue
			}
			if qp, ok := readProc(q); ok && qp.pgrp == b.pgrp {
				seen[q] = true
				tree = append(tree, qp)
			}
		}
	}
	return tree
}

// nextHolder takes the exec lock (queuing behind gocurator) and, holding it,
// writes its marker under parent, fenced by its hold.
func (x *execRunner) nextHolder(ctx context.Context, parent string) nextHold {
	m := mutex.New(x.c, execLock)
	actx, cancel := context.WithTimeout(ctx, 6*x.st)
	defer cancel()
	if err := m.Acquire(actx); err != nil {
		return nextHold{err: fmt.Errorf("acquire: %w", err)}
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), x.st)
		_ = m.Release(rctx)
		cancel()
	}()
	nh := nextHold{token: m.FencingToken()}
	op, err := m.CheckOp()
	if err != nil {
		nh.err = fmt.Errorf("check op: %w", err)
		return nh
	}
	res, err := x.c.Multi(actx, op, framework.CreateOp(fmt.Sprintf("%s/h%d-", parent, nh.token), nil, framework.PersistentSequential))
	if err != nil || len(res) != 2 {
		nh.err = fmt.Errorf("fenced marker: %v", err)
		return nh
	}
	seq, ok := seqOf(res[1].String)
	if !ok {
		nh.err = fmt.Errorf("fenced marker: created %q", res[1].String)
	}
	nh.seq = seq
	return nh
}

// breakHolder runs gocurator break on the lock's holder node (the first
// in the queue, gocurator's).
func (x *execRunner) breakHolder(ctx context.Context) error {
	kids, _, err := x.c.Children(ctx, execLock)
	if err != nil {
		return fmt.Errorf("break: list: %w", err)
	}
	if len(kids) == 0 {
		return errors.New("break: no holder")
	}
	sort.Slice(kids, func(i, j int) bool {
		a, _ := seqOf(kids[i])
		b, _ := seqOf(kids[j])
		return a < b
	})
	node := execLock + "/" + kids[0]
	bctx, cancel := context.WithTimeout(ctx, 2*x.st)
	defer cancel()
	out, err := exec.CommandContext(bctx, x.bin, "--zk", x.servers, "break", node, "--force", "--yes").CombinedOutput()
	if err != nil {
		return fmt.Errorf("gocurator break %s: %v: %s", node, err, lastLine(string(out)))
	}
	return nil
}

// beat is one heartbeat node: t<token>-<role>-<pid>-<pgrp>-<sequence>.
type beat struct {
	token     int64
	role      string
	pid, pgrp int
	seq       int64
}

func parseBeat(name string) (beat, bool) {
	f := strings.Split(name, "-")
	if len(f) != 5 || !strings.HasPrefix(f[0], "t") {
		return beat{}, false
	}
	var b beat
	var err1, err2, err3, err4 error
	b.token, err1 = strconv.ParseInt(f[0][1:], 10, 64)
	b.role = f[1]
	b.pid, err2 = strconv.Atoi(f[2])
	b.pgrp, err3 = strconv.Atoi(f[3])
	b.seq, err4 = strconv.ParseInt(f[4], 10, 64)
	return b, errors.Join(err1, err2, err3, err4) == nil
}

// seqOf returns the sequence number a sequential create appended to name:
// within one parent, sequence numbers follow the order in which the server
// applied the creates (zxid order).
func seqOf(name string) (int64, bool) {
	if len(name) < 10 {
		return 0, false
	}
	n, err := strconv.ParseInt(name[len(name)-10:], 10, 64)
	return n, err == nil
}

// exitStatus returns the status a shell would report for gocurator's end.
func exitStatus(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	default:
		return -1
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}
