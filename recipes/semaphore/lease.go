package semaphore

import (
	"context"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locking"
)

// Lease is one lease of a semaphore, held until Release or until the
// connection ends it (per the client's ErrorPolicy) or the client closes.
// Safe for concurrent use. A nil *Lease (what a failed Acquire returns) is
// safe too and reports nothing held: Release returns ErrNotHeld, Err
// ErrNotHeld, Done a closed channel, Node "", FencingToken 0.
type Lease struct {
	h    *locking.Hold
	path string // the semaphore's, for errors
}

func newLease(path string, h *locking.Hold) *Lease { return &Lease{h: h, path: path} }

// Release returns the lease: it deletes the lease node. The delete is
// guaranteed: if it fails (connection down, ctx ended) Release returns the
// error and the delete goes on in the background until it succeeds or the
// client closes. Release of a lost lease returns ErrLockLost (its node is
// being deleted already); a second Release returns ErrNotHeld.
//
// A nil ctx is refused (framework.ErrInvalidOption) before anything
// changes: the lease goes on.
func (l *Lease) Release(ctx context.Context) error {
	if l == nil {
		return ErrNotHeld
	}
	if err := l.h.Release(ctx); err != nil {
		return fmt.Errorf("semaphore %s: release %s: %w", l.path, l.h.Node(), err)
	}
	return nil
}

// Done returns a channel closed when the lease ends: released, or lost with
// the connection.
func (l *Lease) Done() <-chan struct{} { return l.hold().Done() }

// Err returns nil while the lease is held, ErrLockLost once it was lost,
// framework.ErrClosed once the client's Close ended it and ErrNotHeld once
// it was released.
func (l *Lease) Err() error { return l.hold().Err() }

// Node returns the path of the lease node (without namespace).
func (l *Lease) Node() string { return l.hold().Node() }

// FencingToken returns the czxid of the lease node: it grows with every new
// lease of the path, so a resource can tell a newer lease holder from an
// older one.
func (l *Lease) FencingToken() int64 { return l.hold().FencingToken() }

// CheckOp returns a transaction operation that fails unless the lease node
// still exists: put it in front of a write so that the server applies the
// write only while the lease is held. ErrNotHeld (or the lease's Err) when
// the lease is released or lost, ErrNotHeld for a nil Lease. See
// FencedMulti.
func (l *Lease) CheckOp() (framework.Op, error) {
	h := l.hold()
	if h == nil {
		return framework.Op{}, ErrNotHeld
	}
	if err := h.Err(); err != nil {
		return framework.Op{}, fmt.Errorf("semaphore %s: check %s: %w", l.path, h.Node(), err)
	}
	return h.CheckOp(), nil
}

// FencedMulti runs ops in one transaction behind the lease's CheckOp, so
// the server applies them only while the lease node exists; the results of
// ops alone. The check's failure is zk.ErrNoNode (wrapped).
func (l *Lease) FencedMulti(ctx context.Context, ops ...framework.Op) ([]zk.MultiResponse, error) {
	check, err := l.CheckOp()
	if err != nil {
		return nil, err
	}
	res, err := l.h.Client().Multi(ctx, append([]framework.Op{check}, ops...)...)
	if err != nil {
		return nil, fmt.Errorf("semaphore %s: fenced write: %w", l.path, err)
	}
	return res[1:], nil
}

// hold returns the lease's hold, nil for a nil Lease (locking.Hold's
// methods report nothing held then).
func (l *Lease) hold() *locking.Hold {
	if l == nil {
		return nil
	}
	return l.h
}
