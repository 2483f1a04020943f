package locking

import (
	"context"
	"fmt"
	"sync"

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

	mu       sync.Mutex
	also     []string        // the attempt's Nodes, deleted after node; guarded by mu
	err      error           // nil while held
	lostIn   connstate.State // the state that ended it, recorded as it ended
	released bool
}

// live reports whether the hold is still held, ending it first if its
// session can no longer be alive by the clock (framework's SessionAlive):
// after a process pause the first look at a hold is right, whether or not
// the client's late timer has fired yet.
func (h *Hold) live() bool {
	h.mu.Lock()
	held := h.err == nil
	h.mu.Unlock()
	if !held {
		return false
	}
	if h.c.SessionAlive(h.session) {
		return true
	}
	h.end(ErrLockLost, connstate.Lost, "session expired: the client-side deadline passed", true)
	return false
}

func (l *Loop) hold(node string, stat *zk.Stat) *Hold {
	if l.policy != nil {
		return newPolicyHold(l.c, node, stat, l.log, l.policy)
	}
	return newHold(l.c, node, stat, l.log)
}

// newHold starts tracking a held node of ours (stat is its Stat): the hold
// ends on Release, or when the client's ErrorPolicy says a state is an
// error or the session is no longer stat's, and then its node is deleted.
func newHold(c *framework.Client, node string, stat *zk.Stat, log *zap.Logger) *Hold {
	h := &Hold{c: c, log: log, node: node, czxid: stat.Czxid, session: stat.EphemeralOwner}
	// One registry of the client ends every hold, with no goroutine each:
	// on a state the error policy counts as an error, on the end of the
	// node's session (at once if it ended already), and on Close, before
	// the session ends (the session's end deletes the node then).
	stop := c.Guard(h.session, func(closed bool, s connstate.State) {
		if closed {
			h.end(framework.ErrClosed, 0, "client closed", false)
			return
		}
		h.end(ErrLockLost, s, s.String(), true)
	})
	h.mu.Lock()
	h.cancel = stop
	h.mu.Unlock()
	return h
}

// end ends the hold with err (ErrLockLost, or framework.ErrClosed), lost
// in state s (0 for none, as on Close) and, with del, deletes its node as
// soon as the connection allows, so it blocks nobody once the session is
// back.
func (h *Hold) end(err error, s connstate.State, why string, del bool) {
	if s != 0 && s != connstate.Lost && !h.c.SessionAlive(h.session) {
		// Ended by a state after the session's deadline passed (a
		// process pause, then the socket's close seen before the
		// clock was read): the session is what was lost.
		s = connstate.Lost
	}
	h.mu.Lock()
	if h.err != nil || h.released {
		h.mu.Unlock()
		return
	}
	h.err, h.lostIn = err, s
	h.tel.ended(err, why)
	h.closeDoneLocked()
	cancel := h.cancel // nil while newHold is still registering: nothing to stop then
	also := h.also
	h.mu.Unlock()
	h.log.Info("lock lost", zap.String("node", h.node), zap.String("why", why))
	if cancel != nil {
		cancel()
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
	_ = deleteAll(done, h.c, also)
}

// attach gives the hold its attempt's Nodes, to delete after its own node.
// A hold that ended already (lost between its grant and now) deletes them
// at once, as its end would have.
func (h *Hold) attach(nodes []string) {
	if len(nodes) == 0 {
		return
	}
	h.mu.Lock()
	ended := h.err != nil
	if !ended {
		h.also = nodes
	}
	h.mu.Unlock()
	if ended {
		done, stop := context.WithCancel(context.Background())
		stop()
		_ = deleteAll(done, h.c, nodes)
	}
}

// deleteAll deletes nodes, guaranteed, and returns the first error.
func deleteAll(ctx context.Context, c *framework.Client, nodes []string) error {
	var first error
	for _, n := range nodes {
		if err := c.Delete(ctx, n, framework.Guaranteed(), framework.Quietly()); err != nil && first == nil {
			first = err
		}
	}
	return first
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

// Done returns a channel closed when the hold ends: released, or lost. A
// hold whose session the clock says is over (after a process pause, say)
// is ended before Done returns, so the first look after the pause finds
// the channel closed.
func (h *Hold) Done() <-chan struct{} {
	if h == nil {
		return fanout.Closed()
	}
	h.live()
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
// once ended by the client's Close, ErrNotHeld once released. Like Done it
// judges the session by the clock, not only by the events handled so far.
func (h *Hold) Err() error {
	if h == nil {
		return ErrNotHeld
	}
	h.live()
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// LostIn returns the connection state that ended the hold, as recorded
// when it ended: Lost when its session ended (expired, declared expired by
// the client or by the clock), Suspended or another state the error policy
// counts as an error; 0 while held and when it ended by Release or the
// client's Close.
func (h *Hold) LostIn() connstate.State {
	if h == nil {
		return 0
	}
	h.live()
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lostIn
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
	nodes, err := h.detach()
	if err != nil {
		return err
	}
	// The attempt's other nodes go after ours, so they outlive it.
	return deleteAll(ctx, h.c, nodes)
}

// detach ends the hold as Release does, and returns the nodes Release
// deletes, in order: ours, then the attempt's others. After a loss it
// returns the loss, a second time ErrNotHeld, and no nodes. The cohort
// (lockhook.Hooks.Detach) deletes ours in a transaction of its own.
func (h *Hold) detach() ([]string, error) {
	h.mu.Lock()
	if h.released {
		h.mu.Unlock()
		return nil, ErrNotHeld
	}
	h.released = true
	lost := h.err
	if lost == nil {
		h.err = ErrNotHeld
		h.tel.ended(nil, "")
		h.closeDoneLocked()
	}
	cancel, also := h.cancel, h.also
	h.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if lost != nil {
		return nil, lost
	}
	return append([]string{h.node}, also...), nil
}

// CheckOp returns a transaction operation that fails unless our node still
// exists: put it in front of a write to a protected resource so that the
// server applies the write only while the lock is held (ZooKeeper-side
// fencing).
// A nil hold's is the zero Op, which Multi refuses, and so is the Op of a
// hold that has ended (judged by the clock too, as Err).
func (h *Hold) CheckOp() framework.Op {
	if h == nil || !h.live() {
		return framework.Op{}
	}
	return framework.CheckOp(h.node, -1)
}
