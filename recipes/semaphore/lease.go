package semaphore

import (
	"context"
	"fmt"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locking"
)

// Lease is one lease of a semaphore, held until Release or until the
// connection ends it (per the client's ErrorPolicy). Safe for concurrent
// use.
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
func (l *Lease) Done() <-chan struct{} { return l.h.Done() }

// Err returns nil while the lease is held, ErrLockLost once it was lost and
// ErrNotHeld once it was released.
func (l *Lease) Err() error { return l.h.Err() }

// Node returns the path of the lease node (without namespace).
func (l *Lease) Node() string { return l.h.Node() }

// FencingToken returns the czxid of the lease node: it grows with every new
// lease of the path, so a resource can tell a newer lease holder from an
// older one.
func (l *Lease) FencingToken() int64 { return l.h.FencingToken() }

// CheckOp returns a transaction operation that fails unless the lease node
// still exists: put it in front of a write so that the server applies the
// write only while the lease is held.
func (l *Lease) CheckOp() framework.Op { return l.h.CheckOp() }
