package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/spf13/cobra"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locking"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/recipes/semaphore"
)

// Environment of the command exec runs.
const (
	envToken = "GOCURATOR_FENCING_TOKEN"
	envNode  = "GOCURATOR_LOCK_NODE"
)

// groupHelp is what exec and elect exec do with CMD's processes; each
// command's help says first what loses its hold.
const groupHelp = `CMD runs in a process group of its
own, and gocurator exits, releasing the hold, only when no process of the
group is left. Losing the hold sends the whole group SIGTERM, then SIGKILL
after --grace; so does CMD's exit to the processes it leaves running in
its group. SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to gocurator are passed
on to the group (before CMD starts they stop the wait instead, leaving no
node behind); Ctrl-Z stops the group, then gocurator. A process that leaves
the group (setsid, as a daemon does) is out of reach: run daemons in the
foreground. CMD is not the terminal's foreground job: give it input from a
file or a pipe, not the terminal.`

// endSignals are the signals exec passes on to CMD's group (before CMD
// runs, they stop the wait for the hold).
var endSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// execOptions are exec's flags.
type execOptions struct {
	leases    int
	v2        bool
	grace     time.Duration
	wait      time.Duration
	revocable bool
	// notAcquired is the exit status when --wait ends first (-E).
	notAcquired int
	// elect, when set, campaigns in the election at PATH instead (elect
	// exec): CMD runs while this process leads.
	elect *electOptions
}

func (a *app) execCommand() *cobra.Command {
	var o execOptions
	cmd := &cobra.Command{
		Use:   "exec PATH -- CMD [ARGS...]",
		Short: "Run CMD only while holding the mutex (or a semaphore lease) at PATH",
		Long: `Waits for the mutex at PATH (Curator's InterProcessMutex layout), runs CMD
while it is held, releases it when CMD exits, and exits with CMD's status
(128+n if a signal n ended it).

CMD gets the hold's fencing token (the lock node's czxid, larger for every
later holder) in GOCURATOR_FENCING_TOKEN and the lock node's path in
GOCURATOR_LOCK_NODE: pass the token to the resource the lock protects so it
can refuse a stale holder.

The hold is lost when the connection is suspended or the session expires,
when the lock node is deleted (as gocurator break does) or, with
--revocable, when a revocation request comes. ` + groupHelp + `

With -n N, CMD runs while holding one of N leases of the semaphore at PATH
(the V1 layout; --v2 for Curator's InterProcessSemaphoreV2, to share PATH with
Java processes).

PATH must not hold another recipe's nodes (a read/write lock's, a V2
semaphore's, a leader latch's): they would not be excluded, so exec refuses
it, before waiting and again once granted. With -n N --v2 it also refuses
when more than N leases are held at once.

gocurator's own exit statuses: 2 usage, 65 PATH holds another recipe's
nodes, 69 cannot connect, 75 not acquired within --wait (-E sets it), 126
CMD cannot run, 127 CMD not found, 130 interrupted before CMD ran.`,
		Example: `  gocurator --zk zk1:2181 exec /locks/nightly -- ./nightly-job.sh --full
  gocurator --zk zk1:2181 exec -n 3 --v2 /semaphores/exports -- ./export.sh`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if n := cmd.ArgsLenAtDash(); n != 1 {
				return usageError{errors.New("exec takes PATH, then -- and the command")}
			}
			return a.exec(cmd.Context(), args[0], args[1:], o)
		},
	}
	f := cmd.Flags()
	f.IntVarP(&o.leases, "leases", "n", 0, "hold one lease of a semaphore of N leases instead of the mutex")
	f.BoolVar(&o.v2, "v2", false, "with -n: Curator's InterProcessSemaphoreV2 layout (locks/ and leases/)")
	f.DurationVar(&o.grace, "grace", 10*time.Second, "how long CMD's process group has between SIGTERM and SIGKILL")
	f.DurationVar(&o.wait, "wait", 0, "give up if the lock is not held within this long (0: wait for ever)")
	f.BoolVar(&o.revocable, "revocable", false, "treat Curator's revocation request (gocurator revoke) as losing the hold")
	notAcquiredFlag(cmd, &o)
	return cmd
}

// notAcquiredFlag adds -E, flock's --conflict-exit-code.
func notAcquiredFlag(cmd *cobra.Command, o *execOptions) {
	cmd.Flags().IntVarP(&o.notAcquired, "conflict-exit-code", "E", exitNotAcquired,
		"exit status when --wait ends before the hold is granted (0-255)")
}

// hold is what exec holds: a mutex or a lease.
type hold struct {
	node    string
	token   int64
	done    <-chan struct{}
	err     func() error
	release func(ctx context.Context) error
}

func (a *app) exec(ctx context.Context, path string, argv []string, o execOptions) error {
	if err := checkPath(path); err != nil {
		return err
	}
	if o.leases < 0 {
		return usageError{fmt.Errorf("-n %d: the number of leases must be positive", o.leases)}
	}
	if o.v2 && o.leases == 0 {
		return usageError{errors.New("--v2 needs -n N")}
	}
	if o.notAcquired < 0 || o.notAcquired > 255 {
		return usageError{fmt.Errorf("-E %d: an exit status is 0 to 255", o.notAcquired)}
	}
	if o.wait < 0 {
		return usageError{fmt.Errorf("--wait %v: must not be negative", o.wait)}
	}
	bin, err := exec.LookPath(argv[0])
	if err != nil {
		// sh's statuses: 127 not found, 126 found but not runnable.
		code := exitCannotRun
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			code = exitNotFound
		}
		return exitError{code: code, msg: fmt.Sprintf("%s: %v", argv[0], err)}
	}
	// Signals are caught from here on: while waiting for the lock they
	// stop the wait; once CMD runs they are passed on.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, endSignals...)
	defer signal.Stop(sigs)

	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := a.checkLayout(ctx, c, path, o); err != nil {
		return err
	}

	actx, cancel := context.WithCancel(ctx)
	if o.wait > 0 {
		actx, cancel = context.WithTimeout(ctx, o.wait)
	}
	defer cancel()
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-actx.Done():
		}
	}()
	h, err := acquire(actx, c, path, o)
	stopped := actx.Err() != nil && ctx.Err() == nil && !errors.Is(actx.Err(), context.DeadlineExceeded)
	cancel()
	switch {
	case stopped:
		if err == nil {
			rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), a.timeout)
			_ = h.release(rctx)
			rcancel()
		}
		return exitError{code: exitInterrupted, msg: "interrupted while waiting for " + path}
	case err == nil:
	case errors.Is(err, context.DeadlineExceeded):
		return exitError{code: o.notAcquired, msg: fmt.Sprintf("%s: not acquired within %v (--wait)", path, o.wait)}
	case errors.Is(err, semaphore.ErrLayoutMismatch):
		return exitError{code: exitLayout, msg: fmt.Sprintf("%s: %v; nothing run", path, err)}
	default:
		return fmt.Errorf("%s: acquire: %v", path, err)
	}
	defer func() {
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), a.timeout)
		defer rcancel()
		_ = h.release(rctx)
	}()
	// Participants of another recipe may have come while we waited.
	if err := a.checkLayout(ctx, c, path, o); err != nil {
		return err
	}

	child := exec.Command(bin, argv[1:]...)
	child.Args[0] = argv[0]
	child.Stdin, child.Stdout, child.Stderr = a.stdin, a.stdout, a.stderr
	child.Env = append(os.Environ(), envToken+"="+strconv.FormatInt(h.token, 10), envNode+"="+h.node)
	g, err := startGroup(child)
	if err != nil {
		return exitError{code: exitCannotRun, msg: fmt.Sprintf("%s: %v", argv[0], err)}
	}
	if len(jobSignals) > 0 { // Notify with none would catch every signal
		signal.Notify(sigs, jobSignals...)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()

	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	gone := watchNode(wctx, c, h.node, o.revocable)
	return exitError{code: a.supervise(g, exited, sigs, h, gone, path, argv[0], o.grace)}
}

// groupPoll is how often exec looks whether the processes its command
// left in its group have ended: no event says so.
const groupPoll = 20 * time.Millisecond

// supervise runs while the command runs, and after it until no process of
// its group is left, and returns the command's exit status; the hold is
// released only after it returns. Losing the hold (h.done closes, or gone
// says why) ends the group: SIGTERM, then SIGKILL after grace. So does the
// command's exit, to the processes it leaves behind: anything started
// under the hold ends with it. Signals gocurator receives go to the group.
func (a *app) supervise(g *procGroup, exited <-chan error, sigs <-chan os.Signal, h *hold, gone <-chan string,
	path, name string, grace time.Duration) int {
	var (
		lost       = h.done
		status     int
		kill, poll <-chan time.Time // the grace is over; time to look at the group again
		graced     bool             // the grace has begun
		signalled  bool             // the group was asked to end: our SIGTERM, or one of endSignals passed on
	)
	// end gives the group the grace to end, and sends it SIGTERM unless
	// it was asked to end already: to many programs a second signal means
	// to give up a clean exit.
	end := func(why string) {
		if graced {
			return
		}
		graced, kill = true, time.After(grace)
		if signalled {
			fmt.Fprintf(a.stderr, "gocurator: %s: the process group of %s, signalled already, gets SIGKILL in %v\n", why, name, grace)
			return
		}
		signalled = true
		fmt.Fprintf(a.stderr, "gocurator: %s: sending SIGTERM to the process group of %s\n", why, name)
		g.terminate()
	}
	for {
		select {
		case err := <-exited:
			exited, status = nil, exitCode(err)
			if g.empty() {
				return status
			}
			end(name + " exited and left processes in its group")
			t := time.NewTicker(groupPoll)
			defer t.Stop()
			poll = t.C
		case <-poll:
			if g.empty() {
				return status
			}
		case s := <-sigs:
			g.relay(s)
			signalled = signalled || slices.Contains(endSignals, s)
		case <-lost:
			lost, gone = nil, nil
			end(fmt.Sprintf("lost the hold on %s (%v)", path, h.err()))
		case why := <-gone:
			lost, gone = nil, nil
			end(fmt.Sprintf("lost the hold on %s (%s)", path, why))
		case <-kill:
			kill = nil
			fmt.Fprintf(a.stderr, "gocurator: the process group of %s is still running %v after SIGTERM: sending SIGKILL\n", name, grace)
			g.kill()
		}
	}
}

// watchNode watches the held node and says why the hold must end: the
// node was deleted (by gocurator break, or by hand), or, with revocable,
// Curator's revocation request was written into it. Connection trouble is
// the hold's own Done; on any other error the watch just stops.
func watchNode(ctx context.Context, c *framework.Client, node string, revocable bool) <-chan string {
	out := make(chan string, 1)
	go func() {
		for {
			data, _, ch, err := c.GetW(ctx, node)
			switch {
			case errors.Is(err, zk.ErrNoNode):
				out <- "its node was deleted"
				return
			case err != nil:
				return
			case revocable && string(data) == locking.RevokeMessage:
				out <- "revocation requested"
				return
			}
			select {
			case ev := <-ch:
				if ev.Type == zk.EventNodeDeleted {
					out <- "its node was deleted"
					return
				}
				if ev.Type == zk.EventNotWatching && ctx.Err() != nil {
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// exitCode returns the status a shell would report for a child's end.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return 1
}

// acquire takes the mutex or, with -n, a lease, or (elect exec) leads.
func acquire(ctx context.Context, c *framework.Client, path string, o execOptions) (*hold, error) {
	if o.elect != nil {
		return campaign(ctx, c, path, *o.elect)
	}
	if o.leases == 0 {
		m := mutex.New(c, path)
		if err := m.Acquire(ctx); err != nil {
			return nil, err
		}
		return &hold{node: m.Node(), token: m.FencingToken(), done: m.Done(), err: m.Err, release: m.Release}, nil
	}
	// -n without --v2 is the V1 layout, which is no longer the library's
	// default: say so.
	opts := []semaphore.Option{semaphore.CuratorV1()}
	if o.v2 {
		opts = []semaphore.Option{semaphore.CuratorV2()}
	}
	l, err := semaphore.New(c, path, o.leases, opts...).Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return &hold{node: l.Node(), token: l.FencingToken(), done: l.Done(), err: l.Err, release: l.Release}, nil
}
