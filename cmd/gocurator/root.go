package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/spf13/cobra"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/retry"
)

// Defaults of the global flags.
const (
	defaultZK      = "127.0.0.1:2181"
	defaultTimeout = 10 * time.Second
	// defaultSession is the session timeout asked for; exec's hold ends
	// when the session is lost, so it bounds how long after a partition
	// another process can be granted the lock.
	defaultSession = 30 * time.Second
	envZK          = "GOCURATOR_ZK"
	envAuth        = "GOCURATOR_AUTH"
)

// app holds the global flags and the streams of one run.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer

	zk             string
	auth           []string
	authScheme     string
	json           bool
	timeout        time.Duration
	sessionTimeout time.Duration
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "gocurator",
		Short: "Inspect and use ZooKeeper lock recipes (Curator, gocurator, kazoo, go-zookeeper)",
		Long: `gocurator shows who holds and who waits for the locks, read/write locks,
semaphores and leader elections on a ZooKeeper ensemble, recognised by the
layout of their nodes (Apache Curator's and this module's, kazoo's and
go-zookeeper's), and runs a command only while a lock is held.

Each participant is tied to its owner session, the host written in its node,
its age and its fencing token (the node's czxid), and to whether its session
is still connected (from the servers' "cons" four-letter word, when the
servers allow it; "unknown" otherwise).`,
		Example: `  gocurator --zk zk1:2181,zk2:2181/app locks ls /locks -r
  gocurator --zk zk1:2181 --json locks ls /locks/orders
  gocurator --zk zk1:2181 exec /locks/nightly -- ./nightly-job.sh
  gocurator --zk zk1:2181 semaphore leases /semaphores/exports --count /config/exports-max`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       version(),
		PersistentPreRunE: func(*cobra.Command, []string) error {
			// A zero --timeout would fail every read at once, as if the
			// server were down: say what is wrong instead.
			if a.timeout <= 0 {
				return usageError{fmt.Errorf("--timeout %v: must be positive", a.timeout)}
			}
			if a.sessionTimeout <= 0 {
				return usageError{fmt.Errorf("--session-timeout %v: must be positive", a.sessionTimeout)}
			}
			return nil
		},
	}
	root.SetVersionTemplate("gocurator {{.Version}}\n")
	zk := os.Getenv(envZK)
	if zk == "" {
		zk = defaultZK
	}
	var auth []string
	if v := os.Getenv(envAuth); v != "" {
		auth = []string{v}
	}
	f := root.PersistentFlags()
	f.StringVar(&a.zk, "zk", zk, "ZooKeeper connect string host:port[,host:port...][/chroot] (env "+envZK+")")
	f.StringArrayVar(&a.auth, "auth", auth, "credentials, user:password for the digest scheme; may be repeated (env "+envAuth+")")
	f.StringVar(&a.authScheme, "auth-scheme", "digest", "scheme of the --auth credentials")
	f.BoolVar(&a.json, "json", false, "print JSON instead of tables")
	f.DurationVar(&a.timeout, "timeout", defaultTimeout, "how long to wait for the connection and for each command's reads")
	f.DurationVar(&a.sessionTimeout, "session-timeout", defaultSession, "ZooKeeper session timeout to ask for")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(a.locksCommand(), a.execCommand(), a.electCommand(), a.semaphoreCommand(), a.leaderCommand(),
		a.orphansCommand(), a.revokeCommand(), a.breakCommand(), a.treeCommand(), a.versionCommand())
	root.AddCommand(a.servicesCommand())
	root.AddCommand(a.groupCommand())
	root.AddCommand(a.barrierCommand(), a.atomicCommand())
	root.AddCommand(a.lsCommand(), a.getCommand(), a.statCommand())
	root.AddCommand(a.uiCommand())
	root.AddCommand(a.queueCommand())
	// cobra adds these at Execute; added now, guardGroups sees them too.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	guardGroups(root)
	a.completePaths(root)
	return root
}

// usageError is a command line that could not be understood (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// exitError ends the run with a status and, if msg is set, a message.
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }

// exitStatus prints err, if any, as one line and returns the status.
func (a *app) exitStatus(err error) int {
	if err == nil {
		return 0
	}
	var ee exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(a.stderr, "gocurator: "+oneLine(ee.msg))
		}
		return ee.code
	}
	var ue usageError
	msg := err.Error()
	if errors.As(err, &ue) || isCobraUsage(msg) {
		fmt.Fprintln(a.stderr, "gocurator: "+oneLine(msg)+" (see gocurator --help)")
		return exitUsage
	}
	fmt.Fprintln(a.stderr, "gocurator: "+oneLine(msg))
	return exitFailure
}

// isCobraUsage tells the argument errors cobra makes itself.
func isCobraUsage(msg string) bool {
	for _, s := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "received ", "unknown flag", "unknown shorthand"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// oneLine joins the lines of msg.
func oneLine(msg string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", " ")), " ")
}

// connect connects to --zk with the credentials, within --timeout. Reads
// are retried a few times on connection loss only.
// open checks a command's path argument and connects: the first two steps
// of every command that reads or writes one path.
func (a *app) open(ctx context.Context, path string) (*framework.Client, error) {
	if err := checkPath(path); err != nil {
		return nil, err
	}
	return a.connect(ctx)
}

func (a *app) connect(ctx context.Context, extra ...framework.Option) (*framework.Client, error) {
	opts := []framework.Option{
		framework.WithSessionTimeout(a.sessionTimeout),
		framework.WithConnectionTimeout(a.timeout),
		framework.WithRetryPolicy(retry.BoundedExponentialBackoff(50*time.Millisecond, time.Second, 5)),
	}
	for _, cred := range a.auth {
		if a.authScheme == "digest" && !strings.Contains(cred, ":") {
			return nil, usageError{fmt.Errorf("--auth %q: digest credentials are user:password", cred)}
		}
		opts = append(opts, framework.WithAuth(a.authScheme, []byte(cred)))
	}
	cctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	c, err := framework.Connect(cctx, a.zk, append(opts, extra...)...)
	switch {
	case err == nil:
		return c, nil
	case errors.Is(err, framework.ErrInvalidConnectString):
		return nil, usageError{fmt.Errorf("--zk %q: not host:port[,host:port...][/chroot]", a.zk)}
	case errors.Is(err, framework.ErrAuthFailed):
		return nil, fmt.Errorf("ZooKeeper at %s refused the %s credentials", a.zk, a.authScheme)
	case errors.Is(err, context.DeadlineExceeded):
		return nil, exitError{code: exitNoConnect,
			msg: fmt.Sprintf("cannot connect to ZooKeeper at %s within %v (is it running? see --zk and --timeout)", a.zk, a.timeout)}
	case errors.Is(err, context.Canceled):
		return nil, exitError{code: exitInterrupted, msg: "interrupted while connecting"}
	default:
		return nil, exitError{code: exitNoConnect, msg: fmt.Sprintf("cannot connect to ZooKeeper at %s: %v", a.zk, err)}
	}
}

// describe turns a client error about path into a line for an operator.
func (a *app) describe(path string, err error) error {
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return fmt.Errorf("%s: no such node", path)
	case errors.Is(err, zk.ErrNoAuth):
		if len(a.auth) == 0 {
			return fmt.Errorf("%s: not authorised to read it (pass --auth user:password)", path)
		}
		return fmt.Errorf("%s: not authorised to read it with the credentials given", path)
	case errors.Is(err, framework.ErrInvalidPath):
		return usageError{fmt.Errorf("%q is not a valid ZooKeeper path (absolute, no trailing slash)", path)}
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: no answer within %v (see --timeout)", path, a.timeout)
	case errors.Is(err, framework.ErrClosed), errors.Is(err, context.Canceled):
		return exitError{code: exitInterrupted, msg: "interrupted"}
	default:
		return fmt.Errorf("%s: %v", path, err)
	}
}

// checkPath refuses a path ZooKeeper would refuse, before connecting.
func checkPath(p string) error {
	if err := framework.ValidatePath(p); err != nil {
		return usageError{fmt.Errorf("%q is not a valid ZooKeeper path (absolute, no trailing slash)", p)}
	}
	return nil
}
