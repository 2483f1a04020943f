package rwlock

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/internal/reentrant"
	"github.com/gocurator/curator/recipes/locking"
)

// Lock is one lock of an RWLock, read or write, with the verbs of a mutex;
// get it from ReadLock or WriteLock. It is reentrant: while held, Acquire
// counts one more hold and each Acquire needs a Release; goroutines that
// share one Lock share its hold. Methods are safe for concurrent use;
// concurrent Acquires on one Lock run one at a time. A nil *Lock is safe
// too: see ErrNilHandle.
type Lock struct {
	rw   *RWLock
	side side
	r    *reentrant.Handle
}

func newLock(rw *RWLock, s side, l *locking.Loop, d locking.Driver, localHandover int) *Lock {
	k := &Lock{rw: rw, side: s}
	hooks := reentrant.Hooks{
		Refuse: func() error {
			if k.upgrade() {
				return ErrUpgradeNotSupported
			}
			return nil
		},
		// A downgrade raced the write lock's release: the loop deleted
		// the node, and the next one is an ordinary read node.
		Retry: func(err error) bool { return errors.Is(err, errDowngradeRaced) },
	}
	if s == writeSide {
		hooks.Changed = rw.notify
		hooks.LocalHandover = localHandover
		// A downgraded holder's read node sits behind the write node:
		// another local writer must not hold it meanwhile.
		hooks.MayHandOver = func() bool { return !rw.read.IsHeld() }
	}
	k.r = reentrant.New(l, d, fmt.Sprintf("rwlock %s: %s lock", l.Path(), s), hooks)
	return k
}

// reentrant returns the Lock's state, nil for a nil Lock (whose calls then
// behave as framework.ErrNilHandle says).
func (k *Lock) reentrant() *reentrant.Handle {
	if k == nil {
		return nil
	}
	return k.r
}

// Acquire blocks until the lock is held or ctx ends (use a ctx deadline for
// a timeout): a read lock waits for the writers queued ahead of it, a write
// lock for every holder and waiter ahead of it. If this Lock is held
// already, Acquire counts one more hold and returns at once; the read lock
// of an RWLock holding the write lock is granted at once too (downgrade).
// The write lock of an RWLock holding only the read lock returns
// ErrUpgradeNotSupported at once. On failure nothing is held and no node is
// left (see "Nothing left behind" in docs/design.md), and the error is
// never nil: ctx's error, framework.ErrClosed, ErrLayoutMismatch, or the
// ZooKeeper error the retry policy gave up on.
func (k *Lock) Acquire(ctx context.Context) error { return k.reentrant().Acquire(ctx) }

// TryAcquire acquires the lock only if it can be held now: it never waits
// for another holder (it does wait for the network). It returns false, with
// no node left behind, when others hold or are queued for a conflicting
// lock. Reentrancy, downgrade and ErrUpgradeNotSupported are as for Acquire.
func (k *Lock) TryAcquire(ctx context.Context) (bool, error) { return k.reentrant().TryAcquire(ctx) }

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
func (k *Lock) Release(ctx context.Context) error { return k.reentrant().Release(ctx) }

// Done returns a channel closed when the current hold ends (released, or
// lost per the client's ErrorPolicy). When nothing is held it returns a
// closed channel.
func (k *Lock) Done() <-chan struct{} { return k.reentrant().Done() }

// Err returns nil while held, ErrLockLost once the hold was lost and
// ErrNotHeld when nothing is held.
func (k *Lock) Err() error { return k.reentrant().Err() }

// IsHeld reports whether this Lock is held now (not lost).
func (k *Lock) IsHeld() bool { return k.reentrant().IsHeld() }

// FencingToken returns the czxid of the held node, which grows with every
// new node in the lock directory, so a resource can reject a write carrying
// an older writer's token; 0 when not held.
func (k *Lock) FencingToken() int64 { return k.reentrant().FencingToken() }

// Node returns the path of the held node, "" when not held (or lost).
func (k *Lock) Node() string { return k.reentrant().Node() }

// LocalWaiters returns how many write locks of this client wait in the
// write lock's local queue (see WithLocalHandover); 0 for a read lock and
// without the option.
func (k *Lock) LocalWaiters() int { return k.reentrant().LocalWaiters() }

// heldName returns the name of the held node, "" when not held or lost.
func (k *Lock) heldName() string {
	_, name := framework.SplitPath(k.r.Node())
	return name
}

// Participants returns the node paths of this side's holders and waiters in
// sequence order, like Curator's getParticipantNodes: when the write lock is
// held, its holder is the first write node. It does not wait for the lock.
func (k *Lock) Participants(ctx context.Context) ([]string, error) {
	if k == nil {
		return nil, ErrNilHandle
	}
	all, err := k.r.Loop().Participants(ctx)
	if err != nil {
		return nil, fmt.Errorf("rwlock %s: %s lock: participants: %w", k.r.Loop().Path(), k.side, err)
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
func (k *Lock) CheckOp() (framework.Op, error) { return k.reentrant().CheckOp() }

// FencedMulti runs ops in one transaction with a check of the held node in
// front, so the server applies them only while the lock node exists: a
// writer that lost its session (or whose node was deleted) cannot write.
// The check's failure is zk.ErrNoNode (wrapped).
func (k *Lock) FencedMulti(ctx context.Context, ops ...framework.Op) ([]zk.MultiResponse, error) {
	return k.reentrant().FencedMulti(ctx, ops...)
}
