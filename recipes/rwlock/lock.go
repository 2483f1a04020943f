package rwlock

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locking"
)

// Lock is one lock of an RWLock, read or write, with the verbs of a mutex;
// get it from ReadLock or WriteLock. It is reentrant: while held, Acquire
// counts one more hold and each Acquire needs a Release. Methods are safe for
// concurrent use; concurrent Acquires on one Lock run one at a time.
type Lock struct {
	rw   *RWLock
	side side
	l    *locking.Internals
	gate chan struct{} // serialises Acquire/TryAcquire on this handle

	mu    sync.Mutex
	hold  *locking.Hold
	count int
	last  error // Err after the last hold ended
}

func newLock(rw *RWLock, s side, l *locking.Internals) *Lock {
	return &Lock{rw: rw, side: s, l: l, gate: make(chan struct{}, 1), last: ErrNotHeld}
}

// Acquire blocks until the lock is held or ctx ends (use a ctx deadline for
// a timeout): a read lock waits for the writers queued ahead of it, a write
// lock for every holder and waiter ahead of it. If this Lock is held
// already, Acquire counts one more hold and returns at once; the read lock
// of an RWLock holding the write lock is granted at once too (downgrade).
// The write lock of an RWLock holding only the read lock returns
// ErrUpgradeNotSupported at once. On failure nothing is held, no node is
// left (it is deleted on a detached context before Acquire returns; in the
// background while the connection is down, or when ctx ended with the create
// still in flight) and the error is never nil: ctx's error,
// framework.ErrClosed, or the ZooKeeper error the retry policy gave up on.
func (k *Lock) Acquire(ctx context.Context) error {
	_, err := k.acquire(ctx, true)
	return err
}

// TryAcquire acquires the lock only if it can be held now: it never waits
// for another holder (it does wait for the network). It returns false, with
// no node left behind, when others hold or are queued for a conflicting
// lock. Reentrancy, downgrade and ErrUpgradeNotSupported are as for Acquire.
func (k *Lock) TryAcquire(ctx context.Context) (bool, error) {
	ok, err := k.acquire(ctx, false)
	if errors.Is(err, locking.ErrWouldBlock) {
		return false, nil
	}
	return ok, err
}

func (k *Lock) acquire(ctx context.Context, wait bool) (bool, error) {
	if err := k.l.Err(); err != nil {
		return false, k.errorf("acquire", err)
	}
	if ctx == nil {
		return false, k.errorf("acquire", fmt.Errorf("%w: nil context", framework.ErrInvalidOption))
	}
	if k.upgrade() {
		return false, k.errorf("acquire", ErrUpgradeNotSupported)
	}
	select {
	case k.gate <- struct{}{}:
	case <-ctx.Done():
		return false, k.errorf("acquire", ctx.Err())
	}
	defer func() { <-k.gate }()

	k.mu.Lock()
	if k.hold != nil && k.hold.Err() == nil {
		k.count++
		k.mu.Unlock()
		return true, nil
	}
	k.mu.Unlock()
	if k.upgrade() {
		return false, k.errorf("acquire", ErrUpgradeNotSupported)
	}

	for {
		h, err := k.l.Acquire(ctx, wait)
		if errors.Is(err, errDowngradeRaced) {
			// The loop deleted the node; the write lock is no longer
			// held, so the next node is an ordinary read node.
			continue
		}
		if err != nil {
			return false, fmt.Errorf("rwlock %s lock: %w", k.side, err)
		}
		k.mu.Lock()
		k.hold, k.count = h, 1
		k.mu.Unlock()
		if k.side == writeSide {
			k.rw.notify()
		}
		return true, nil
	}
}

// upgrade reports whether acquiring this Lock would upgrade: it is the write
// lock, not held, and the read lock of the same RWLock is held.
func (k *Lock) upgrade() bool {
	return k.side == writeSide && !k.IsHeld() && k.rw.read.IsHeld()
}

// Release gives up one hold; the last one deletes the node. The delete is
// guaranteed: if it fails (connection down, ctx ended) Release returns the
// error and the delete continues in the background until it succeeds or the
// client closes. ErrNotHeld when nothing is held; ErrLockLost when the hold
// was lost (the node is being deleted already). Releasing the write lock of
// a downgraded RWLock leaves its read hold in place.
func (k *Lock) Release(ctx context.Context) error {
	k.mu.Lock()
	h := k.hold
	if h == nil {
		k.mu.Unlock()
		return k.errorf("release", ErrNotHeld)
	}
	if h.Err() == nil && k.count > 1 {
		k.count--
		k.mu.Unlock()
		return nil
	}
	k.hold, k.count = nil, 0
	k.mu.Unlock()
	if k.side == writeSide {
		k.rw.notify()
	}
	err := h.Release(ctx)
	k.mu.Lock()
	k.last = h.Err()
	k.mu.Unlock()
	if err != nil {
		return k.errorf("release", err)
	}
	return nil
}

// Done returns a channel closed when the current hold ends (released, or
// lost per the client's ErrorPolicy). When nothing is held it returns a
// closed channel.
func (k *Lock) Done() <-chan struct{} {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.hold == nil {
		return closed
	}
	return k.hold.Done()
}

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Err returns nil while held, ErrLockLost once the hold was lost and
// ErrNotHeld when nothing is held.
func (k *Lock) Err() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.hold == nil {
		return k.last
	}
	return k.hold.Err()
}

// IsHeld reports whether this Lock is held now (not lost).
func (k *Lock) IsHeld() bool { return k.Err() == nil }

// FencingToken returns the czxid of the held node, which grows with every
// new node in the lock directory, so a resource can reject a write carrying
// an older writer's token; 0 when not held.
func (k *Lock) FencingToken() int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.hold == nil || k.hold.Err() != nil {
		return 0
	}
	return k.hold.FencingToken()
}

// Node returns the path of the held node, "" when not held.
func (k *Lock) Node() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.hold == nil {
		return ""
	}
	return k.hold.Node()
}

// heldName returns the name of the held node, "" when not held or lost.
func (k *Lock) heldName() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.hold == nil || k.hold.Err() != nil {
		return ""
	}
	_, name := framework.SplitPath(k.hold.Node())
	return name
}

// Participants returns the node paths of this side's holders and waiters in
// sequence order, like Curator's getParticipantNodes: when the write lock is
// held, its holder is the first write node. It does not wait for the lock.
func (k *Lock) Participants(ctx context.Context) ([]string, error) {
	all, err := k.l.Participants(ctx)
	if err != nil {
		return nil, k.errorf("participants", err)
	}
	nodes := make([]string, 0, len(all))
	for _, p := range all {
		_, name := framework.SplitPath(p)
		if s, _, _ := parseChild(name); s == k.side {
			nodes = append(nodes, p)
		}
	}
	return nodes, nil
}

// CheckOp returns a transaction operation that fails unless the held node
// still exists; ErrNotHeld when nothing is held. See FencedMulti.
func (k *Lock) CheckOp() (framework.Op, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.hold == nil || k.hold.Err() != nil {
		return framework.Op{}, k.errorf("check", ErrNotHeld)
	}
	return k.hold.CheckOp(), nil
}

// FencedMulti runs ops in one transaction with a check of the held node in
// front, so the server applies them only while the lock node exists: a
// writer that lost its session (or whose node was deleted) cannot write.
// The check's failure is zk.ErrNoNode (wrapped).
func (k *Lock) FencedMulti(ctx context.Context, ops ...framework.Op) ([]zk.MultiResponse, error) {
	check, err := k.CheckOp()
	if err != nil {
		return nil, err
	}
	res, err := k.l.Client().Multi(ctx, append([]framework.Op{check}, ops...)...)
	if err != nil {
		return nil, k.errorf("fenced write", err)
	}
	return res[1:], nil
}

func (k *Lock) errorf(op string, err error) error {
	return fmt.Errorf("rwlock %s: %s lock: %s: %w", k.l.Path(), k.side, op, err)
}
