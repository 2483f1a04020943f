package locking

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/fanout"
)

// Hold is one acquisition of a lock: our node, held until Release or until
// the connection ends it. Safe for concurrent use.
type Hold struct {
	c       *framework.Client
	log     *zap.Logger
	node    string
	czxid   int64
	session int64
	done    chan struct{} // Done's, made when first asked for; guarded by mu
	cancel  func() bool   // unregisters the client's guard
	tel     holdTelemetry // guarded by mu (telemetry.go)

	// release, if set, replaces the delete of Release: a cohort's
	// share hands over instead (see cohort).
	release func(ctx context.Context) error
	// mayHandOver, if set, is asked by a cohort's share before it hands
	// over locally; false releases the node instead.
	mayHandOver func() bool
	// version, with versioned, is the node's data version this holder
	// knows: CheckOp then checks it, so that an earlier local holder of
	// the node (a cohort with per-holder tokens) cannot write.
	version   int32
	versioned bool
	// revoked is set once a revocation of the node was seen: a cohort's
	// share then releases the node instead of handing it over locally.
	revoked atomic.Bool

	mu       sync.Mutex
	err      error // nil while held
	released bool
	ended    func(error) // called once the hold ends other than by Release
}

// setEnded sets the function called (once, on no lock of h's) when the hold
// ends other than by Release; nil removes it.
func (h *Hold) setEnded(f func(error)) {
	h.mu.Lock()
	h.ended = f
	h.mu.Unlock()
}

func (l *Loop) hold(node string, stat *zk.Stat) *Hold {
	if l.policy != nil {
		return newPolicyHold(l.c, node, stat, l.log, l.policy)
	}
	return NewHold(l.c, node, stat, l.log)
}

// NewHold starts tracking a held node of ours (stat is its Stat), for
// recipes whose holds are not made by the loop, such as a semaphore lease:
// the hold ends on Release, or when the client's ErrorPolicy says a state is
// an error or the session is no longer stat's, and then its node is deleted.
// log may be nil.
func NewHold(c *framework.Client, node string, stat *zk.Stat, log *zap.Logger) *Hold {
	if log == nil {
		log = zap.NewNop()
	}
	h := &Hold{c: c, log: log, node: node, czxid: stat.Czxid, session: stat.EphemeralOwner}
	// One registry of the client ends every hold, with no goroutine each:
	// on a state the error policy counts as an error, on the end of the
	// node's session (at once if it ended already), and on Close, before
	// the session ends (the session's end deletes the node then).
	stop := c.Guard(h.session, func(closed bool, s connstate.State) {
		if closed {
			h.end(framework.ErrClosed, "client closed", false)
			return
		}
		h.end(ErrLockLost, s.String(), true)
	})
	h.mu.Lock()
	h.cancel = stop
	h.mu.Unlock()
	return h
}

// end ends the hold with err (ErrLockLost, or framework.ErrClosed) and,
// with del, deletes its node as soon as the connection allows, so it blocks
// nobody once the session is back.
func (h *Hold) end(err error, why string, del bool) {
	h.mu.Lock()
	if h.err != nil || h.released {
		h.mu.Unlock()
		return
	}
	h.err = err
	h.tel.ended(err, why)
	h.closeDoneLocked()
	cancel := h.cancel // nil while NewHold is still registering: nothing to stop then
	ended := h.ended
	h.mu.Unlock()
	h.log.Info("lock lost", zap.String("node", h.node), zap.String("why", why))
	if cancel != nil {
		cancel()
	}
	if ended != nil {
		ended(err)
	}
	if !del {
		return
	}
	// Guaranteed: a done context makes the delete go to the background at
	// once, where it keeps trying until it succeeds or the client closes.
	// A node of an expired session is gone already (Quietly).
	done, stop := context.WithCancel(context.Background())
	stop()
	_ = h.c.Delete(done, h.node, framework.Guaranteed(), framework.Quietly())
}

// Client returns the client the hold's node belongs to (nil for a nil
// Hold).
func (h *Hold) Client() *framework.Client {
	if h == nil {
		return nil
	}
	return h.c
}

// Node returns the path of our node (without namespace).
func (h *Hold) Node() string {
	if h == nil {
		return ""
	}
	return h.node
}

// FencingToken returns the czxid of our node: it grows with every new holder
// of the lock, so a resource can reject a write carrying an older token.
func (h *Hold) FencingToken() int64 {
	if h == nil {
		return 0
	}
	return h.czxid
}

// Session returns the session our node belongs to.
func (h *Hold) Session() int64 {
	if h == nil {
		return 0
	}
	return h.session
}

// Done returns a channel closed when the hold ends: released, or lost.
func (h *Hold) Done() <-chan struct{} {
	if h == nil {
		return fanout.Closed()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done == nil {
		// Made when first asked for: a hold nobody selects on costs no
		// channel.
		if h.err != nil {
			return fanout.Closed()
		}
		h.done = make(chan struct{})
	}
	return h.done
}

// closeDoneLocked closes Done's channel if it was made (an unmade one is
// closed from now on: Done returns a closed channel once h.err is set).
func (h *Hold) closeDoneLocked() {
	if h.done != nil {
		close(h.done)
	}
}

// Err returns nil while held, ErrLockLost once lost, framework.ErrClosed
// once ended by the client's Close, ErrNotHeld once released.
func (h *Hold) Err() error {
	if h == nil {
		return ErrNotHeld
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// Release ends the hold and deletes our node. The delete is guaranteed: if
// it fails (connection down, ctx ended) Release returns the error and the
// delete goes on in the background until it succeeds or the client closes.
// Release after a loss returns ErrLockLost (framework.ErrClosed after the
// client's Close); a second Release ErrNotHeld. A nil ctx is refused
// (framework.ErrInvalidOption) before anything changes: the hold goes on.
func (h *Hold) Release(ctx context.Context) error {
	if h == nil {
		return ErrNotHeld
	}
	if ctx == nil {
		return fmt.Errorf("%w: nil context", framework.ErrInvalidOption)
	}
	h.mu.Lock()
	if h.released {
		h.mu.Unlock()
		return ErrNotHeld
	}
	h.released = true
	lost := h.err
	if lost == nil {
		h.err = ErrNotHeld
		h.tel.ended(nil, "")
		h.closeDoneLocked()
	}
	cancel := h.cancel
	h.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if lost != nil {
		return lost
	}
	if h.release != nil {
		return h.release(ctx)
	}
	return h.c.Delete(ctx, h.node, framework.Guaranteed(), framework.Quietly())
}

// CheckOp returns a transaction operation that fails unless our node still
// exists: put it in front of a write to a protected resource so that the
// server applies the write only while the lock is held (ZooKeeper-side
// fencing).
// A nil hold's is the zero Op, which Multi refuses.
func (h *Hold) CheckOp() framework.Op {
	if h == nil {
		return framework.Op{}
	}
	if h.versioned {
		return framework.CheckOp(h.node, h.version)
	}
	return framework.CheckOp(h.node, -1)
}
