package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
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

// execOptions are exec's flags.
type execOptions struct {
	leases    int
	v2        bool
	grace     time.Duration
	wait      time.Duration
	revocable bool
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

If the hold is lost (the connection is suspended or the session expires; the
lock node is deleted, as gocurator break does; with --revocable, a
revocation request comes), CMD is sent SIGTERM, then SIGKILL after --grace. SIGINT, SIGTERM
and SIGHUP sent to gocurator are passed on to CMD; while still waiting for
the lock they stop the wait instead.

With -n N, CMD runs while holding one of N leases of the semaphore at PATH
(the V1 layout; --v2 for Curator's InterProcessSemaphoreV2, to share PATH with
Java processes).`,
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
	f.DurationVar(&o.grace, "grace", 10*time.Second, "after the hold is lost, how long CMD has between SIGTERM and SIGKILL")
	f.DurationVar(&o.wait, "wait", 0, "give up if the lock is not held within this long (0: wait for ever)")
	f.BoolVar(&o.revocable, "revocable", false, "treat Curator's revocation request (gocurator revoke) as losing the hold")
	return cmd
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
	bin, err := exec.LookPath(argv[0])
	if err != nil {
		return fmt.Errorf("%s: %v", argv[0], err)
	}
	// Signals are caught from here on: while waiting for the lock they
	// stop the wait; once CMD runs they are passed on.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)

	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()

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
		return exitError{code: 130, msg: "interrupted while waiting for " + path}
	case err == nil:
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: not acquired within %v (--wait)", path, o.wait)
	default:
		return fmt.Errorf("%s: acquire: %v", path, err)
	}
	defer func() {
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), a.timeout)
		defer rcancel()
		_ = h.release(rctx)
	}()

	child := exec.Command(bin, argv[1:]...)
	child.Args[0] = argv[0]
	child.Stdin, child.Stdout, child.Stderr = a.stdin, a.stdout, a.stderr
	child.Env = append(os.Environ(), envToken+"="+strconv.FormatInt(h.token, 10), envNode+"="+h.node)
	if err := child.Start(); err != nil {
		return fmt.Errorf("%s: %v", argv[0], err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()

	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	gone := watchNode(wctx, c, h.node, o.revocable)
	var kill <-chan time.Time
	lost := h.done
	var werr error
	stop := func(why string) {
		lost, gone = nil, nil
		fmt.Fprintf(a.stderr, "gocurator: lost the hold on %s (%s): sending SIGTERM to %s\n", path, why, argv[0])
		_ = child.Process.Signal(syscall.SIGTERM)
		kill = time.After(o.grace)
	}
wait:
	for {
		select {
		case werr = <-exited:
			break wait
		case s := <-sigs:
			_ = child.Process.Signal(s)
		case <-lost:
			stop(fmt.Sprint(h.err()))
		case why := <-gone:
			stop(why)
		case <-kill:
			kill = nil
			fmt.Fprintf(a.stderr, "gocurator: %s still running %v after SIGTERM: sending SIGKILL\n", argv[0], o.grace)
			_ = child.Process.Kill()
		}
	}
	return exitError{code: exitCode(werr)}
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
	var opts []semaphore.Option
	if o.v2 {
		opts = append(opts, semaphore.CuratorV2())
	}
	l, err := semaphore.New(c, path, o.leases, opts...).Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return &hold{node: l.Node(), token: l.FencingToken(), done: l.Done(), err: l.Err, release: l.Release}, nil
}
