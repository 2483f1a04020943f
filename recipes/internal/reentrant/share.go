package reentrant

import (
	"context"
	"sync"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/fanout"
	"github.com/gocurator/curator/recipes/locking"
)

// share is one local holder's share of its cohort's hold: the cohort's
// node, a token (the node's, or its own with per-holder tokens), and a
// Done, Err and Release of its own. Release hands the hold to the next
// local waiter or lets the node go (cohort.release).
type share struct {
	co *cohort
	g  *locking.Hold // the cohort's hold this shares
	// token is the fencing token; with versioned, version is the node's
	// data version this holder made (perHolderToken), which CheckOp checks
	// so that an earlier local holder of the node cannot write.
	token     int64
	version   int32
	versioned bool
	// From the handle's hooks: asked before a hand-over, and called on a
	// revocation while this share holds.
	mayHandOver func() bool
	revoked     func()

	mu       sync.Mutex
	done     chan struct{} // Done's, made when first asked for
	err      error         // nil while held
	released bool
}

// live reports whether the share is still held, ending it first if the
// cohort's hold has ended (judged by the clock too, so that the first look
// after a process pause is right).
func (h *share) live() bool {
	h.mu.Lock()
	held := h.err == nil
	h.mu.Unlock()
	if !held {
		return false
	}
	if err := h.g.Err(); err != nil {
		h.end(err)
		return false
	}
	return true
}

// end ends the share with err, unless it ended or was released already;
// the share's user leaves the cohort.
func (h *share) end(err error) {
	h.mu.Lock()
	if h.err != nil || h.released {
		h.mu.Unlock()
		return
	}
	h.err = err
	if h.done != nil {
		close(h.done)
	}
	h.mu.Unlock()
	h.co.leave()
}

// Node returns the path of the cohort's node.
func (h *share) Node() string { return h.g.Node() }

// FencingToken returns the share's token.
func (h *share) FencingToken() int64 { return h.token }

// Done returns a channel closed when the share ends: released, or lost
// with the cohort's hold.
func (h *share) Done() <-chan struct{} {
	h.live()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done == nil {
		if h.err != nil {
			return fanout.Closed()
		}
		h.done = make(chan struct{})
	}
	return h.done
}

// Err returns nil while held, the cohort's hold's error once lost, and
// ErrNotHeld once released.
func (h *share) Err() error {
	h.live()
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// Release ends the share: the hold passes to the next local waiter, or
// the node is deleted (cohort.release). After a loss it returns the loss;
// a second Release returns ErrNotHeld.
func (h *share) Release(ctx context.Context) error {
	h.mu.Lock()
	if h.released {
		h.mu.Unlock()
		return locking.ErrNotHeld
	}
	h.released = true
	lost := h.err
	if lost == nil {
		h.err = locking.ErrNotHeld
		if h.done != nil {
			close(h.done)
		}
	}
	h.mu.Unlock()
	if lost != nil {
		return lost
	}
	return h.co.release(ctx, h)
}

// CheckOp returns a check of the cohort's node (at this holder's version
// with per-holder tokens); the zero Op once the share ended.
func (h *share) CheckOp() framework.Op {
	if !h.live() {
		return framework.Op{}
	}
	if h.versioned {
		return framework.CheckOp(h.Node(), h.version)
	}
	return framework.CheckOp(h.Node(), -1)
}
