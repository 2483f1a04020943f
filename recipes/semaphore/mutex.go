package semaphore

import (
	"context"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/fanout"
)

// Mutex is a non-reentrant distributed mutex (Curator's
// InterProcessSemaphoreMutex): a V2 semaphore with one lease, so Go and
// Java processes can share it. Like sync.Mutex, the handle is not an owner:
// while it is held, another Acquire on the same handle blocks until some
// goroutine calls Release. Methods are safe for concurrent use. A nil
// *Mutex is safe too: Acquire, TryAcquire and Participants return
// ErrNilHandle, Release ErrNotHeld, and the queries report nothing held.
type Mutex struct {
	sem   *Semaphore
	token chan struct{} // full while the handle holds or is acquiring

	mu    sync.Mutex
	lease *Lease
	last  error // Err after the last lease ended
}

// NewMutex returns a mutex on path with the layout of Curator's
// InterProcessSemaphoreMutex. It does no I/O; bad input is reported by
// every call. opts are the Semaphore's (WithData, WithTelemetryName); the
// maximum is always 1, so WithMaxLeasesFrom is refused
// (framework.ErrInvalidOption) rather than ignored.
func NewMutex(c *framework.Client, path string, opts ...Option) *Mutex {
	var given options
	for _, o := range opts {
		if o != nil {
			o(&given)
		}
	}
	m := &Mutex{sem: New(c, path, 1, append(append([]Option{}, opts...), CuratorV2())...), token: make(chan struct{}, 1), last: ErrNotHeld}
	if given.countSet && m.sem.err == nil {
		// Its maximum is 1: a count would be ignored, so it is refused.
		m.sem.err = fmt.Errorf("%w: WithMaxLeasesFrom does not apply to a semaphore mutex (its maximum is 1)", framework.ErrInvalidOption)
	}
	return m
}

// Acquire blocks until the mutex is held or ctx ends (use a ctx deadline
// for a timeout); while this handle holds it, Acquire waits for a Release.
// On failure nothing is held, no node is left, and the error is never nil.
func (m *Mutex) Acquire(ctx context.Context) error {
	if m == nil {
		return ErrNilHandle
	}
	if ctx == nil {
		return fmt.Errorf("semaphore mutex %s: %w: nil context", m.sem.path, framework.ErrInvalidOption)
	}
	select {
	case m.token <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("semaphore mutex %s: acquire: %w", m.sem.path, ctx.Err())
	}
	l, err := m.sem.Acquire(ctx)
	if err != nil {
		<-m.token
		return err
	}
	m.set(l)
	return nil
}

// TryAcquire takes the mutex only if nobody holds it, this handle included:
// it never waits for a holder. It returns false, with no node left behind,
// when the mutex is held.
func (m *Mutex) TryAcquire(ctx context.Context) (bool, error) {
	if m == nil {
		return false, ErrNilHandle
	}
	if ctx == nil {
		return false, fmt.Errorf("semaphore mutex %s: %w: nil context", m.sem.path, framework.ErrInvalidOption)
	}
	select {
	case m.token <- struct{}{}:
	default:
		return false, nil
	}
	l, ok, err := m.sem.TryAcquire(ctx)
	if !ok {
		<-m.token
		return false, err
	}
	m.set(l)
	return true, nil
}

func (m *Mutex) set(l *Lease) {
	m.mu.Lock()
	m.lease = l
	m.mu.Unlock()
}

// Release releases the mutex, from any goroutine; the delete of its node is
// guaranteed (see Lease.Release). ErrNotHeld when the handle does not hold
// it; ErrLockLost when the hold was lost, which still frees the handle for
// the next Acquire. A nil ctx is refused (framework.ErrInvalidOption)
// before anything changes: the hold goes on.
func (m *Mutex) Release(ctx context.Context) error {
	if m == nil {
		return ErrNotHeld
	}
	if ctx == nil {
		return fmt.Errorf("semaphore mutex %s: release: %w: nil context", m.sem.path, framework.ErrInvalidOption)
	}
	m.mu.Lock()
	l := m.lease
	m.lease = nil
	m.mu.Unlock()
	if l == nil {
		return fmt.Errorf("semaphore mutex %s: release: %w", m.sem.path, ErrNotHeld)
	}
	err := l.Release(ctx)
	m.mu.Lock()
	m.last = l.Err()
	m.mu.Unlock()
	<-m.token
	return err
}

// Done returns a channel closed when the current hold ends (released, or
// lost per the client's ErrorPolicy); a closed channel when nothing is held.
func (m *Mutex) Done() <-chan struct{} {
	if m == nil {
		return fanout.Closed()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lease == nil {
		return fanout.Closed()
	}
	return m.lease.Done()
}

// Err returns nil while held, ErrLockLost once the hold was lost,
// framework.ErrClosed once the client's Close ended it and ErrNotHeld when
// nothing is held.
func (m *Mutex) Err() error {
	if m == nil {
		return ErrNotHeld
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lease == nil {
		return m.last
	}
	return m.lease.Err()
}

// IsHeld reports whether the handle holds the mutex now (not lost).
func (m *Mutex) IsHeld() bool { return m.Err() == nil }

// Node returns the path of the held lease node, "" when not held.
func (m *Mutex) Node() string {
	if m == nil {
		return ""
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lease == nil {
		return ""
	}
	return m.lease.Node()
}

// FencingToken returns the czxid of the held lease node (greater for every
// later holder), 0 when not held.
func (m *Mutex) FencingToken() int64 {
	if l := m.current(); l != nil {
		return l.FencingToken()
	}
	return 0
}

// CheckOp returns a transaction operation that fails unless the held lease
// node still exists; ErrNotHeld when nothing is held. See FencedMulti.
func (m *Mutex) CheckOp() (framework.Op, error) {
	if l := m.current(); l != nil {
		return l.CheckOp()
	}
	return framework.Op{}, ErrNotHeld
}

// FencedMulti runs ops in one transaction behind CheckOp, so the server
// applies them only while this handle's lease node exists (a holder that
// lost its session cannot write); the results of ops alone. The check's
// failure is zk.ErrNoNode (wrapped).
func (m *Mutex) FencedMulti(ctx context.Context, ops ...framework.Op) ([]zk.MultiResponse, error) {
	if m == nil {
		return nil, ErrNilHandle
	}
	l := m.current()
	if l == nil {
		return nil, fmt.Errorf("semaphore mutex %s: fenced write: %w", m.sem.path, ErrNotHeld)
	}
	return l.FencedMulti(ctx, ops...)
}

// current returns the held lease, nil when nothing is held.
func (m *Mutex) current() *Lease {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lease
}

// Participants returns the lease nodes of the path (at most the holder and
// one waiter, the gate holder).
func (m *Mutex) Participants(ctx context.Context) ([]string, error) {
	if m == nil {
		return nil, ErrNilHandle
	}
	return m.sem.Participants(ctx)
}
