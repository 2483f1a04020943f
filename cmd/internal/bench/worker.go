package bench

import (
	"context"
	"fmt"
	"strings"
	"sync"
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
	// Session numbers the worker's session when workers share sessions
	// (Config.PerSession): Client and Conn then return the session's one
	// connection, shared with the other workers of the session.
	Session int

	pool *sessionPool // nil: connections of the worker's own

	closers []func()
}

// Client connects a gocurator client, with Curator's retry policy and
// session timeout as Bench.java uses them.
func (w *Worker) Client(ctx context.Context) (*framework.Client, error) {
	if w.pool != nil {
		return w.pool.client(ctx, w)
	}
	c, err := Connect(ctx, w.Servers)
	if err != nil {
		return nil, err
	}
	w.closers = append(w.closers, func() { _ = c.Close() })
	return c, nil
}

// Conn connects a go-zookeeper connection and waits for its session.
func (w *Worker) Conn(ctx context.Context) (*zk.Conn, error) {
	if w.pool != nil {
		return w.pool.conn(ctx, w)
	}
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

// sessionPool is the shared connections of a run whose workers share
// sessions: one client (or go-zookeeper connection) per session number,
// closed by close after the workers' own.
type sessionPool struct {
	mu      sync.Mutex
	clients map[int]*framework.Client
	conns   map[int]*zk.Conn
}

func (p *sessionPool) client(ctx context.Context, w *Worker) (*framework.Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.clients[w.Session]; ok {
		return c, nil
	}
	c, err := Connect(ctx, w.Servers)
	if err != nil {
		return nil, err
	}
	if p.clients == nil {
		p.clients = map[int]*framework.Client{}
	}
	p.clients[w.Session] = c
	return c, nil
}

func (p *sessionPool) conn(ctx context.Context, w *Worker) (*zk.Conn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.conns[w.Session]; ok {
		return c, nil
	}
	c, err := DialZK(ctx, w.Servers)
	if err != nil {
		return nil, err
	}
	if p.conns == nil {
		p.conns = map[int]*zk.Conn{}
	}
	p.conns[w.Session] = c
	return c, nil
}

func (p *sessionPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.clients {
		_ = c.Close()
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.clients, p.conns = nil, nil
}
