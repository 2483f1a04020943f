package zktest

import (
	"fmt"
	"io"
	"time"
)

// Option configures Launch and LaunchEnsemble.
type Option func(*options)

type options struct {
	// logOutput receives a copy of every server's output; nil keeps it
	// only in the server's log file.
	logOutput io.Writer
	// baseDir is where each server's directory is created; "" means
	// os.TempDir().
	baseDir string
	// keepFiles leaves data, configuration and logs behind on Close.
	keepFiles bool
	// maxHeapMB is the JVM's -Xmx in MiB; 256 is plenty for tests.
	maxHeapMB int
	// startTimeout bounds every wait for a server to serve (Launch,
	// LaunchEnsemble, Restart).
	startTimeout time.Duration
	// jvmArgs are appended after the defaults, so they can override them.
	jvmArgs []string
	// reconfig makes an ensemble with a dynamic configuration that can be
	// reconfigured (WithReconfig).
	reconfig bool
	// host is the members' address in the configuration; "" for
	// 127.0.0.1.
	host string
	// clientHost is the client address of the members in a dynamic
	// configuration; "" for host.
	clientHost string
}

// hostName is the address the configuration gives the members.
func (o options) hostName() string {
	if o.host == "" {
		return "127.0.0.1"
	}
	return o.host
}

// minHeapMB is the smallest heap ZooKeeper starts with reliably.
const minHeapMB = 32

func defaultOptions() options {
	return options{
		maxHeapMB:    256,
		startTimeout: 30 * time.Second,
	}
}

func buildOptions(opts []Option) (options, error) {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	if o.maxHeapMB < minHeapMB {
		return o, fmt.Errorf("zktest: heap of %d MiB is below the minimum of %d MiB", o.maxHeapMB, minHeapMB)
	}
	if o.startTimeout <= 0 {
		return o, fmt.Errorf("zktest: start timeout %v must be positive", o.startTimeout)
	}
	return o, nil
}

// WithLogOutput copies the output of every server to w as well as to the
// server's log file. Writes to w come from a goroutine per server process,
// so w must be safe for concurrent use when an ensemble shares it.
func WithLogOutput(w io.Writer) Option {
	return func(o *options) { o.logOutput = w }
}

// WithBaseDir creates each server's directory (data, zoo.cfg, server.log)
// under dir instead of os.TempDir().
func WithBaseDir(dir string) Option {
	return func(o *options) { o.baseDir = dir }
}

// WithKeepFiles makes Close leave each server's directory behind, for
// inspection after a run; Dir names it.
func WithKeepFiles() Option {
	return func(o *options) { o.keepFiles = true }
}

// WithMaxHeapMB sets the JVM's maximum heap (-Xmx) in MiB. The default is
// 256; values below 32 make Launch fail.
func WithMaxHeapMB(mb int) Option {
	return func(o *options) { o.maxHeapMB = mb }
}

// WithStartTimeout bounds how long Launch, LaunchEnsemble and Restart wait
// for servers to serve. The default is 30s.
func WithStartTimeout(d time.Duration) Option {
	return func(o *options) { o.startTimeout = d }
}

// WithJVMArgs appends JVM arguments (for example "-Dzookeeper.snapCount=100")
// after the defaults, so they take precedence.
func WithJVMArgs(args ...string) Option {
	return func(o *options) { o.jvmArgs = append(o.jvmArgs, args...) }
}

// WithReconfig makes LaunchEnsemble start an ensemble that can be
// reconfigured (ZooKeeper 3.5+ dynamic reconfiguration): reconfigEnabled,
// standaloneEnabled=false (so an ensemble of one is a reconfigurable
// ensemble too, not a standalone server), the members in a dynamic
// configuration file with their client addresses, and
// zookeeper.skipACL=yes, since ZooKeeper lets only the super user
// reconfigure otherwise. AddServer starts new members for it.
func WithReconfig() Option {
	return func(o *options) { o.reconfig = true }
}

// WithConfigHost writes host (a name such as "localhost", or an address
// that reaches 127.0.0.1) as the members' quorum address in the
// configuration instead of 127.0.0.1, for tests of clients that read the
// configuration (/zookeeper/config). Servers stay reachable at Addr.
func WithConfigHost(host string) Option {
	return func(o *options) { o.host = host }
}

// WithClientAddress writes host as the members' client address in a
// dynamic configuration (WithReconfig) instead of the quorum address: for
// example "0.0.0.0", the wildcard, which clients of the configuration must
// not dial. The servers then listen on host.
func WithClientAddress(host string) Option {
	return func(o *options) { o.clientHost = host }
}
