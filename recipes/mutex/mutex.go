package mutex

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locking"
)

// Mutex is a reentrant distributed mutex. The handle is the owner: it may
// acquire again while holding (each Acquire needs a Release), and two
// goroutines that must exclude each other need two handles. Methods are safe
// for concurrent use; concurrent Acquires on one handle run one at a time.
type Mutex struct {
	l    *locking.Internals
	opts options
	gate chan struct{} // serialises Acquire/TryAcquire on this handle

	mu    sync.Mutex
	hold  *locking.Hold
	count int
	last  error // Err after the last hold ended
}

// New returns a mutex on path. It does no I/O; a nil client or an invalid
// path is reported by every call (ErrNilClient, ErrInvalidPath).
func New(c *framework.Client, path string, opts ...Option) *Mutex {
	m := &Mutex{gate: make(chan struct{}, 1), last: ErrNotHeld}
	for _, o := range opts {
		if o != nil {
			o(&m.opts)
		}
	}
	data := m.opts.data
	if m.opts.revoked != nil {
		data = []byte{}
	}
	m.l = locking.New(c, path, locking.StandardDriver{LockName: "lock-", Data: data})
	return m
}

// Acquire blocks until the handle holds the lock or ctx ends (use a ctx
// deadline for a timeout). If the handle already holds it, Acquire counts
// one more hold and returns at once. On failure nothing is held, no node is
// left (it is deleted on a detached context before Acquire returns, or by a
// guaranteed delete in the background while the connection is down) and the
// error is never nil: ctx's error, framework.ErrClosed, or the ZooKeeper
// error the retry policy gave up on.
func (m *Mutex) Acquire(ctx context.Context) error {
	_, err := m.acquire(ctx, true)
	return err
}

// TryAcquire acquires the lock only if nobody else holds it: it never waits
// for another holder (it does wait for the network). It returns false, with
// no node left behind, when the lock is held elsewhere.
func (m *Mutex) TryAcquire(ctx context.Context) (bool, error) {
	ok, err := m.acquire(ctx, false)
	if errors.Is(err, locking.ErrWouldBlock) {
		return false, nil
	}
	return ok, err
}

func (m *Mutex) acquire(ctx context.Context, wait bool) (bool, error) {
	if err := m.l.Err(); err != nil {
		return false, fmt.Errorf("mutex %s: %w", m.l.Path(), err)
	}
	if ctx == nil {
		return false, fmt.Errorf("mutex %s: %w: nil context", m.l.Path(), framework.ErrInvalidOption)
	}
	select {
	case m.gate <- struct{}{}:
	case <-ctx.Done():
		return false, fmt.Errorf("mutex %s: %w", m.l.Path(), ctx.Err())
	}
	defer func() { <-m.gate }()

	m.mu.Lock()
	if m.hold != nil && m.hold.Err() == nil {
		m.count++
		m.mu.Unlock()
		return true, nil
	}
	m.mu.Unlock()

	h, err := m.l.Acquire(ctx, wait)
	if err != nil {
		return false, fmt.Errorf("mutex %s: %w", m.l.Path(), err)
	}
	m.mu.Lock()
	m.hold, m.count = h, 1
	m.mu.Unlock()
	if m.opts.revoked != nil {
		locking.WatchRevocation(h, func() { m.opts.revoked(m) })
	}
	return true, nil
}

// Release gives up one hold; the last one deletes the node. The delete is
// guaranteed: if it fails (connection down, ctx ended) Release returns the
// error and the delete continues in the background until it succeeds or the
// client closes. ErrNotHeld when nothing is held; ErrLockLost when the hold
// was lost (the node is being deleted already).
func (m *Mutex) Release(ctx context.Context) error {
	m.mu.Lock()
	h := m.hold
	if h == nil {
		m.mu.Unlock()
		return fmt.Errorf("mutex %s: release: %w", m.l.Path(), ErrNotHeld)
	}
	if h.Err() == nil && m.count > 1 {
		m.count--
		m.mu.Unlock()
		return nil
	}
	m.hold, m.count = nil, 0
	m.mu.Unlock()
	err := h.Release(ctx)
	m.mu.Lock()
	m.last = h.Err()
	m.mu.Unlock()
	if err != nil {
		return fmt.Errorf("mutex %s: release: %w", m.l.Path(), err)
	}
	return nil
}

// Done returns a channel closed when the current hold ends (released, or
// lost per the client's ErrorPolicy). When nothing is held it returns a
// closed channel.
func (m *Mutex) Done() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hold == nil {
		return closed
	}
	return m.hold.Done()
}

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Err returns nil while held, ErrLockLost once the hold was lost and
// ErrNotHeld when nothing is held.
func (m *Mutex) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hold == nil {
		return m.last
	}
	return m.hold.Err()
}

// IsHeld reports whether the handle holds the lock now (not lost).
func (m *Mutex) IsHeld() bool { return m.Err() == nil }

// FencingToken returns the czxid of the held node, which grows with every
// new holder of the lock; 0 when not held.
func (m *Mutex) FencingToken() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hold == nil || m.hold.Err() != nil {
		return 0
	}
	return m.hold.FencingToken()
}

// Node returns the path of the held node, "" when not held (or lost).
func (m *Mutex) Node() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hold == nil || m.hold.Err() != nil {
		return ""
	}
	return m.hold.Node()
}

// Participants returns the node paths of the holder and the waiters, holder
// first (Curator's getParticipantNodes).
func (m *Mutex) Participants(ctx context.Context) ([]string, error) {
	return m.l.Participants(ctx)
}

// CheckOp returns a transaction operation that fails unless the held node
// still exists; ErrNotHeld when nothing is held. See FencedMulti.
func (m *Mutex) CheckOp() (framework.Op, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hold == nil || m.hold.Err() != nil {
		return framework.Op{}, fmt.Errorf("mutex %s: %w", m.l.Path(), ErrNotHeld)
	}
	return m.hold.CheckOp(), nil
}

// FencedMulti runs ops in one transaction with a check of the held node in
// front, so the server applies them only while the lock node exists: a
// holder that lost its session (or whose node was deleted) cannot write.
// The check's failure is zk.ErrNoNode (wrapped).
func (m *Mutex) FencedMulti(ctx context.Context, ops ...framework.Op) ([]zk.MultiResponse, error) {
	check, err := m.CheckOp()
	if err != nil {
		return nil, err
	}
	res, err := m.l.Client().Multi(ctx, append([]framework.Op{check}, ops...)...)
	if err != nil {
		return nil, fmt.Errorf("mutex %s: fenced write: %w", m.l.Path(), err)
	}
	return res[1:], nil
}
