package reentrant

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/fanout"
	"github.com/gocurator/curator/recipes/locking"
)

// Handle is the per-handle state of a reentrant lock recipe and the verbs
// built on it: the current hold, its hold count, and a gate that runs the
// handle's acquires one at a time. The mutex and both locks of the
// read/write lock are thin wrappers around one. The handle is the owner: Go
// has no thread identity, so reentrancy is per Handle value.
type Handle struct {
	l     *locking.Loop
	key   cohortKey // the lock's, for the cohort (Hooks.LocalHandover)
	label string    // error prefix, such as "mutex /locks/a"
	hooks Hooks
	gate  chan struct{}

	mu    sync.Mutex
	hold  holder
	count int
	last  error // Err after the last hold ended
}

// Hooks lets a recipe adjust Handle; every field is optional.
type Hooks struct {
	// Refuse is asked before a new hold is acquired (not for a reentrant
	// one); a non-nil error is returned at once, with no node made. The
	// read/write lock refuses upgrades with it.
	Refuse func() error
	// Retry reports whether an error of the loop's Acquire means "acquire
	// again at once" (the loop has deleted its node already).
	Retry func(error) bool
	// Changed is called after a hold starts and after it is released.
	Changed func()
	// Revoked, if set, makes the handle's holds revocable: it is called,
	// once per hold, on a goroutine of its own, when mutex.Revoke asks
	// the holder of the held node to release (mutex.Revocable).
	Revoked func()
	// LocalHandover, if positive, makes the handle one of its client's
	// cohort on the lock: the handles of one client on one lock (with the
	// same driver) share one node and pass the hold among themselves
	// with no request, at most LocalHandover times in a row (see the
	// mutex's WithLocalHandover). The cohort takes the value of the
	// handle that made it.
	LocalHandover int
	// PerHolderTokens, with LocalHandover, gives every local holder a
	// fencing token of its own, at one round trip per local hand-over (see
	// the mutex's WithPerHolderTokens), writing the lock's node data
	// again: Data (nil: the client's default data).
	PerHolderTokens bool
	Data            []byte
	// MayHandOver, with LocalHandover, is asked when the handle's last
	// Release would hand the hold to a local waiter: false deletes the
	// node instead (the read/write lock's write side says no while the
	// same RWLock holds its read lock, downgraded).
	MayHandOver func() bool
}

// holder is a hold as a handle sees it: the loop's *locking.Hold, or a
// local holder's share of its cohort's.
type holder interface {
	Done() <-chan struct{}
	Err() error
	Release(ctx context.Context) error
	Node() string
	FencingToken() int64
	CheckOp() framework.Op
}

// New returns the reentrant state for handles on l, whose driver is d.
// label prefixes errors.
func New(l *locking.Loop, d locking.Driver, label string, hooks Hooks) *Handle {
	r := &Handle{l: l, label: label, hooks: hooks, gate: make(chan struct{}, 1), last: locking.ErrNotHeld}
	if d != nil {
		r.key = cohortKey{c: l.Client(), path: l.Path(), kind: fmt.Sprintf("%T/%s", d, d.Node().Name)}
	}
	return r
}

// Loop returns the loop the handle runs on.
func (r *Handle) Loop() *locking.Loop {
	if r == nil {
		return nil
	}
	return r.l
}

// Acquire acquires one hold: at once when the handle holds already,
// otherwise through the loop, waiting for other holders. See the recipes'
// Acquire for the guarantees.
func (r *Handle) Acquire(ctx context.Context) error { return r.acquireHold(ctx, true) }

// acquireHold is Acquire, waiting or not; without wait, ErrWouldBlock
// (wrapped) when the lock is held elsewhere.
func (r *Handle) acquireHold(ctx context.Context, wait bool) error {
	if r == nil {
		return framework.ErrNilHandle
	}
	if err := r.l.Err(); err != nil {
		return r.errorf("acquire", err)
	}
	if ctx == nil {
		return r.errorf("acquire", fmt.Errorf("%w: nil context", framework.ErrInvalidOption))
	}
	if err := r.refuse(); err != nil {
		return r.errorf("acquire", err)
	}
	select {
	case r.gate <- struct{}{}:
	case <-ctx.Done():
		return r.errorf("acquire", ctx.Err())
	}
	defer func() { <-r.gate }()

	r.mu.Lock()
	if r.hold != nil && r.hold.Err() == nil {
		r.count++
		r.mu.Unlock()
		return nil
	}
	r.mu.Unlock()
	if err := r.refuse(); err != nil {
		return r.errorf("acquire", err)
	}
	for {
		h, err := r.acquire(ctx, wait)
		if err != nil && r.hooks.Retry != nil && r.hooks.Retry(err) {
			continue
		}
		if err != nil {
			return r.errorf("acquire", err)
		}
		r.mu.Lock()
		r.hold, r.count = h, 1
		r.mu.Unlock()
		if r.hooks.Changed != nil {
			r.hooks.Changed()
		}
		return nil
	}
}

// acquire runs the loop, or the cohort's acquire with LocalHandover.
func (r *Handle) acquire(ctx context.Context, wait bool) (holder, error) {
	if r.hooks.LocalHandover > 0 {
		return cohortAcquire(ctx, r, wait)
	}
	var (
		h   *locking.Hold
		err error
	)
	if wait {
		h, err = r.l.Acquire(ctx)
	} else {
		var ok bool
		if h, ok, err = r.l.TryAcquire(ctx); err == nil && !ok {
			err = locking.ErrWouldBlock
		}
	}
	if err != nil {
		return nil, err
	}
	if r.hooks.Revoked != nil {
		locking.WatchRevocation(h, r.hooks.Revoked)
	}
	return h, nil
}

// LocalWaiters returns how many handles of this client wait for the hold
// in the handle's cohort (LocalHandover), 0 without one.
func (r *Handle) LocalWaiters() int {
	if r == nil || r.hooks.LocalHandover <= 0 || r.l.Err() != nil {
		return 0
	}
	return cohortWaiting(r.key)
}

// TryAcquire is Acquire without waiting for other holders: false and a nil
// error, with no node left, when the lock is held elsewhere.
func (r *Handle) TryAcquire(ctx context.Context) (bool, error) {
	err := r.acquireHold(ctx, false)
	if errors.Is(err, locking.ErrWouldBlock) {
		return false, nil
	}
	return err == nil, err
}

func (r *Handle) refuse() error {
	if r.hooks.Refuse == nil {
		return nil
	}
	return r.hooks.Refuse()
}

// Release gives up one hold; the last one releases the hold (a guaranteed
// delete of the node, or a local hand-over). ErrNotHeld when nothing is
// held, ErrLockLost when the hold was lost. A nil ctx is refused
// (framework.ErrInvalidOption) before anything changes: the hold goes on.
func (r *Handle) Release(ctx context.Context) error {
	if r == nil {
		return locking.ErrNotHeld
	}
	if ctx == nil {
		return r.errorf("release", fmt.Errorf("%w: nil context", framework.ErrInvalidOption))
	}
	r.mu.Lock()
	h := r.hold
	if h == nil {
		r.mu.Unlock()
		return r.errorf("release", locking.ErrNotHeld)
	}
	if h.Err() == nil && r.count > 1 {
		r.count--
		r.mu.Unlock()
		return nil
	}
	r.hold, r.count = nil, 0
	r.mu.Unlock()
	if r.hooks.Changed != nil {
		r.hooks.Changed()
	}
	err := h.Release(ctx)
	r.mu.Lock()
	r.last = h.Err()
	r.mu.Unlock()
	if err != nil {
		return r.errorf("release", err)
	}
	return nil
}

// current returns the hold if it is live.
func (r *Handle) current() holder {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hold == nil || r.hold.Err() != nil {
		return nil
	}
	return r.hold
}

// Done returns the current hold's Done, or a closed channel when nothing is
// held.
func (r *Handle) Done() <-chan struct{} {
	if r == nil {
		return fanout.Closed()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hold == nil {
		return fanout.Closed()
	}
	return r.hold.Done()
}

// Err returns nil while held, ErrLockLost once lost, framework.ErrClosed
// once ended by the client's Close, ErrNotHeld when nothing is held.
func (r *Handle) Err() error {
	if r == nil {
		return locking.ErrNotHeld
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hold == nil {
		return r.last
	}
	return r.hold.Err()
}

// IsHeld reports whether the handle holds the lock now.
func (r *Handle) IsHeld() bool { return r.Err() == nil }

// FencingToken returns the held node's czxid (or the local holder's own
// token), 0 when not held.
func (r *Handle) FencingToken() int64 {
	if h := r.current(); h != nil {
		return h.FencingToken()
	}
	return 0
}

// Node returns the held node's path, "" when not held (or lost).
func (r *Handle) Node() string {
	if h := r.current(); h != nil {
		return h.Node()
	}
	return ""
}

// CheckOp returns a transaction check of the held node; once the hold
// ended, its Err (ErrLockLost, framework.ErrClosed, or ErrNotHeld after
// Release), wrapped; ErrNotHeld when nothing was ever held.
func (r *Handle) CheckOp() (framework.Op, error) {
	if h := r.current(); h != nil {
		return h.CheckOp(), nil
	}
	if r == nil {
		return framework.Op{}, locking.ErrNotHeld
	}
	err := r.Err()
	if err == nil {
		err = locking.ErrNotHeld // held again since the look above: ask again
	}
	return framework.Op{}, r.errorf("check", err)
}

// FencedMulti runs ops in one transaction behind a check of the held node.
func (r *Handle) FencedMulti(ctx context.Context, ops ...framework.Op) ([]zk.MultiResponse, error) {
	if r == nil {
		return nil, framework.ErrNilHandle
	}
	check, err := r.CheckOp()
	if err != nil {
		return nil, err
	}
	res, err := r.l.Client().Multi(ctx, append([]framework.Op{check}, ops...)...)
	if err != nil {
		return nil, r.errorf("fenced write", err)
	}
	return res[1:], nil
}

func (r *Handle) errorf(op string, err error) error {
	return fmt.Errorf("%s: %s: %w", r.label, op, err)
}
