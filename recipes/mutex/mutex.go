package mutex

import (
	"context"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/internal/reentrant"
	"github.com/gocurator/curator/recipes/locking"
)

// Mutex is a reentrant distributed mutex. The handle is the owner: it may
// acquire again while holding (each Acquire needs a Release), and two
// goroutines that must exclude each other need two handles: goroutines that
// share one handle share its hold (while one holds, Acquire from another
// counts one more hold and returns at once). Methods are safe for concurrent
// use; concurrent Acquires on one handle run one at a time. A nil *Mutex
// is safe too: see ErrNilHandle.
type Mutex struct {
	r *reentrant.Handle
}

// New returns a mutex on path. It does no I/O; a nil client, an invalid
// path or an invalid option is reported by every call (ErrNilClient,
// ErrInvalidPath, framework.ErrInvalidOption).
func New(c *framework.Client, path string, opts ...Option) *Mutex {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	data := o.data
	if o.revoked != nil {
		// Curator's revocable nodes carry empty data (the revoker writes
		// into them): a WithData would be dropped, so it is refused.
		if o.data != nil && o.err == nil {
			o.err = fmt.Errorf("%w: WithData does not apply to a Revocable mutex (its nodes carry empty data, as Curator's)", framework.ErrInvalidOption)
		}
		data = []byte{}
	}
	m := &Mutex{}
	hooks := reentrant.Hooks{LocalHandover: o.localHandover, PerHolderTokens: o.perHolderTokens, Data: data}
	if o.revoked != nil {
		hooks.Revoked = func() { o.revoked(m) }
	}
	d := locking.StandardDriver{LockName: "lock-", Data: data}
	l := locking.New(c, path, d, locking.WithInvalid(o.err), locking.WithName(o.telemetryName),
		locking.RefusingLayouts(locking.ReadWriteLayout, locking.LatchLayout, locking.SemaphoreV2Layout))
	m.r = reentrant.New(l, d, "mutex "+path, hooks)
	return m
}

// reentrant returns the handle's state, nil for a nil handle (whose calls
// then behave as framework.ErrNilHandle says).
func (m *Mutex) reentrant() *reentrant.Handle {
	if m == nil {
		return nil
	}
	return m.r
}

// Acquire blocks until the handle holds the lock or ctx ends (use a ctx
// deadline for a timeout). If the handle already holds it, Acquire counts
// one more hold and returns at once. On failure nothing is held and no node
// is left (see "Nothing left behind" in docs/design.md), and the error is
// never nil: ctx's error, framework.ErrClosed, ErrLayoutMismatch, or the
// ZooKeeper error the retry policy gave up on.
func (m *Mutex) Acquire(ctx context.Context) error { return m.reentrant().Acquire(ctx) }

// TryAcquire acquires the lock only if nobody else holds it: it never waits
// for another holder (it does wait for the network). It returns false, with
// no node left behind, when the lock is held elsewhere.
func (m *Mutex) TryAcquire(ctx context.Context) (bool, error) { return m.reentrant().TryAcquire(ctx) }

// Release gives up one hold; the last one deletes the node. The delete is
// guaranteed: if it fails (connection down, ctx ended) Release returns the
// error and the delete continues in the background until it succeeds or the
// client closes. ErrNotHeld when nothing is held; ErrLockLost when the hold
// was lost (the node is being deleted already).
func (m *Mutex) Release(ctx context.Context) error { return m.reentrant().Release(ctx) }

// Done returns a channel closed when the current hold ends (released, or
// lost per the client's ErrorPolicy). When nothing is held it returns a
// closed channel.
func (m *Mutex) Done() <-chan struct{} { return m.reentrant().Done() }

// Err returns nil while held, ErrLockLost once the hold was lost and
// ErrNotHeld when nothing is held.
func (m *Mutex) Err() error { return m.reentrant().Err() }

// IsHeld reports whether the handle holds the lock now (not lost).
func (m *Mutex) IsHeld() bool { return m.reentrant().IsHeld() }

// FencingToken returns the czxid of the held node, which grows with every
// new holder of the lock; 0 when not held.
func (m *Mutex) FencingToken() int64 { return m.reentrant().FencingToken() }

// Node returns the path of the held node, "" when not held (or lost).
func (m *Mutex) Node() string { return m.reentrant().Node() }

// LocalWaiters returns how many handles of this mutex's client wait in its
// local queue (see WithLocalHandover): handles that share the client's node
// on the path and will be handed the hold with no ZooKeeper request. It is
// 0 without WithLocalHandover.
func (m *Mutex) LocalWaiters() int { return m.reentrant().LocalWaiters() }

// Participants returns the node paths of the holder and the waiters, holder
// first (Curator's getParticipantNodes).
func (m *Mutex) Participants(ctx context.Context) ([]string, error) {
	return m.reentrant().Loop().Participants(ctx)
}

// CheckOp returns a transaction operation that fails unless the held node
// still exists; ErrNotHeld when nothing is held. See FencedMulti.
func (m *Mutex) CheckOp() (framework.Op, error) { return m.reentrant().CheckOp() }

// FencedMulti runs ops in one transaction with a check of the held node in
// front, so the server applies them only while the lock node exists: a
// holder that lost its session (or whose node was deleted) cannot write.
// The check's failure is zk.ErrNoNode (wrapped).
func (m *Mutex) FencedMulti(ctx context.Context, ops ...framework.Op) ([]zk.MultiResponse, error) {
	return m.reentrant().FencedMulti(ctx, ops...)
}
