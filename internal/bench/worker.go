package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/retry"
)

// sessionTimeout is asked by every client, ours and go-zookeeper's, as by
// Curator's side (Bench.java).
const sessionTimeout = 30 * time.Second

// Worker is one simulated client of a run: the connections it makes are its
// own (one ZooKeeper session each) and are closed after the run.
type Worker struct {
	// ID numbers the workers of a run from 0.
	ID int
	// Servers is the connect string (host:port[,host:port...]).
	Servers string
	// Path is the lock path shared by all workers of the run.
	Path string
	// MaxLeases is the number of leases of the semaphore workloads.
	MaxLeases int

	closers []func()
}

// Client connects a gocurator client, with Curator's retry policy and
// session timeout as Bench.java uses them.
func (w *Worker) Client(ctx context.Context) (*framework.Client, error) {
	c, err := Connect(ctx, w.Servers)
	if err != nil {
		return nil, err
	}
	w.closers = append(w.closers, func() { _ = c.Close() })
	return c, nil
}

// Conn connects a go-zookeeper connection and waits for its session.
func (w *Worker) Conn(ctx context.Context) (*zk.Conn, error) {
	conn, err := DialZK(ctx, w.Servers)
	if err != nil {
		return nil, err
	}
	w.closers = append(w.closers, conn.Close)
	return conn, nil
}

// Close closes the worker's connections.
func (w *Worker) Close() {
	for i := len(w.closers) - 1; i >= 0; i-- {
		w.closers[i]()
	}
	w.closers = nil
}

// Connect connects a gocurator client to servers with the benchmark's
// settings: session timeout 30s, ExponentialBackoff(100ms, 3) as Curator's
// ExponentialBackoffRetry(100, 3), no logging.
func Connect(ctx context.Context, servers string) (*framework.Client, error) {
	return framework.Connect(ctx, servers,
		framework.WithSessionTimeout(sessionTimeout),
		framework.WithRetryPolicy(retry.ExponentialBackoff(100*time.Millisecond, 3)))
}

// DialZK connects a go-zookeeper connection to servers (no chroot) and
// waits until it has a session or ctx ends.
func DialZK(ctx context.Context, servers string) (*zk.Conn, error) {
	conn, events, err := zk.Connect(strings.Split(servers, ","), sessionTimeout,
		zk.WithLogInfo(false), zk.WithLogger(nopLogger{}))
	if err != nil {
		return nil, fmt.Errorf("go-zookeeper connect %s: %w", servers, err)
	}
	for {
		select {
		case ev := <-events:
			// go-zookeeper drops events nobody reads, so the channel
			// can be left alone once the session is there.
			if ev.State == zk.StateHasSession {
				return conn, nil
			}
		case <-ctx.Done():
			conn.Close()
			return nil, fmt.Errorf("go-zookeeper connect %s: %w", servers, ctx.Err())
		}
	}
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}
