package reentrant

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/gocurator/curator/framework"
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

	ended    chan struct{}         // Done's: closed once err is set
	once     sync.Once             // ends the share
	err      atomic.Pointer[error] // why the share ended; nil while held
	released atomic.Bool
}

// newShare returns a share of g for a handle with hooks.
func newShare(co *cohort, g *locking.Hold, hooks *Hooks) *share {
	return &share{co: co, g: g, token: g.FencingToken(), versioned: co.perHolder,
		mayHandOver: hooks.MayHandOver, revoked: hooks.Revoked, ended: make(chan struct{})}
}

// end ends the share with err, and reports whether this call did (false:
// it had ended already).
func (h *share) end(err error) bool {
	first := false
	h.once.Do(func() {
		h.err.Store(&err)
		close(h.ended)
		first = true
	})
	return first
}

// lose ends the share with the loss of the cohort's hold, err; its user
// leaves the cohort (unless the share ended already: a released one left
// with its release).
func (h *share) lose(err error) {
	if h.end(err) {
		h.co.leave()
	}
}

// live reports whether the share is still held, losing it first if the
// cohort's hold has ended (judged by the clock too, so that the first look
// after a process pause is right).
func (h *share) live() bool {
	if h.err.Load() != nil {
		return false
	}
	if err := h.g.Err(); err != nil {
		h.lose(err)
		return false
	}
	return true
}

// Node returns the path of the cohort's node.
func (h *share) Node() string { return h.g.Node() }

// FencingToken returns the share's token.
func (h *share) FencingToken() int64 { return h.token }

// Done returns a channel closed when the share ends: released, or lost
// with the cohort's hold.
func (h *share) Done() <-chan struct{} {
	h.live()
	return h.ended
}

// Err returns nil while held, the cohort's hold's error once lost, and
// ErrNotHeld once released.
func (h *share) Err() error {
	if h.live() {
		return nil
	}
	return *h.err.Load()
}

// Release ends the share: the hold passes to the next local waiter, or
// the node is deleted (cohort.release). After a loss it returns the loss;
// a second Release returns ErrNotHeld.
func (h *share) Release(ctx context.Context) error {
	if h.released.Swap(true) {
		return locking.ErrNotHeld
	}
	if !h.end(locking.ErrNotHeld) {
		return *h.err.Load() // lost before
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
