package reentrant

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/internal/lockhook"
	"github.com/gocurator/curator/recipes/locking"
)

// A cohort is the handles of one process (one client) on one lock that
// share one ZooKeeper node: lock cohorting (Dice, Marathe and Shavit,
// PPoPP 2012). The node is acquired once, in the ZooKeeper queue like any
// other participant, on behalf of every local waiter; while it is held, the
// hold passes from one local handle to the next with no request at all, at
// most max times in a row, after which the local waiters queue again
// behind the other processes with a fresh node, made in one transaction
// with the old node's delete (replacement).
//
// Local holders share their node and so its fencing token: the node's
// czxid. Every holder in another process still gets a greater one, and the
// server still rejects a fenced write of any earlier process's holder. The
// local holders of one node are serialised by the cohort itself, a pause of
// the process stops them all and a loss of the session (or of the node)
// ends them all, so within the process the shared token gives no less than
// the mutex gives any goroutines that share one handle.
//
// The ZooKeeper acquire runs on a goroutine of the cohort, with a context
// that ends when the last local waiter has gone: a waiter that gives up
// leaves the local queue at once, and the node goes only with the last one,
// so the place in the ZooKeeper queue is kept as long as anybody here wants
// it.
type cohort struct {
	key cohortKey
	l   *locking.Loop // the loop of the handle that made the cohort
	// From the handle that made the cohort: local hand-overs in a row,
	// per-holder tokens (see perHolderToken) and the node's data they
	// write, and whether holds are revocable (Hooks.Revoked).
	max       int
	perHolder bool
	data      []byte
	revocable bool

	mu        sync.Mutex
	global    *locking.Hold            // the ZooKeeper hold, nil when none
	holder    *share                   // the local holder's share of global
	streak    int                      // local hand-overs since global was acquired
	revoked   bool                     // a revocation of global was seen
	handedOff func(context.Context)    // counts a local hand-over of global
	detach    func() ([]string, error) // ends global, deleting nothing (lockhook.Hooks.Detach)
	acquiring bool                     // a ZooKeeper acquire is under way
	stop      context.CancelFunc       // ends the background acquire
	queue     []*cohortWaiter          // local waiters, first come first
	users     int                      // handles acquiring or holding: the entry goes at 0
	lostErr   error                    // why the last hold was lost (see lost), for its holder's Release
}

type cohortKey struct {
	c    *framework.Client
	path string
	kind string // the driver's lock name and type: handles of different recipes never share
}

// cohortWaiter is a local handle waiting for the hold.
type cohortWaiter struct {
	ready chan struct{} // closed once hold or err is set
	hold  *share
	err   error
	hooks *Hooks // the handle's, for its share
}

// testHookGranted, if set by a test, runs between the ZooKeeper grant of a
// cohort's node and the cohort taking it: the window in which the hold can
// end before the cohort watches for its end.
var testHookGranted atomic.Pointer[func(*locking.Hold)]

var cohorts = struct {
	sync.Mutex
	m map[cohortKey]*cohort
}{m: map[cohortKey]*cohort{}}

// cohortAcquire acquires r's lock for r through the cohort of the lock on
// r's client (see cohort.acquire), made from r's hooks if there is none.
func cohortAcquire(ctx context.Context, r *Handle, wait bool) (holder, error) {
	co := joinCohort(r)
	h, err := co.acquire(ctx, wait, &r.hooks)
	if err != nil {
		co.leave()
		return nil, err
	}
	if co.perHolder && h.token == 0 {
		// A local successor: its token is still to be made.
		if err := co.perHolderToken(ctx, h); err != nil {
			// Hands over, or deletes the node on the client's one rule
			// for clean-up within (or just after) the caller's ctx.
			dctx, cancel := co.l.Client().CleanupContext(ctx)
			_ = h.Release(dctx)
			cancel()
			return nil, err
		}
	}
	return h, nil
}

// perHolderToken gives the local successor h a token of its own: it writes
// the node's data again (one round trip; the data is unchanged, the
// version grows) and takes the write's zxid (the node's mzxid), which is
// greater than every zxid before it, so greater than the token of every
// earlier holder, local or not, and smaller than the czxid of any node
// created later. Its CheckOp then checks the version the write made, so an
// earlier local holder's fenced write fails as well.
func (co *cohort) perHolderToken(ctx context.Context, h *share) error {
	c := co.l.Client()
	data := co.data
	if data == nil {
		data = c.DefaultData()
	}
	st, err := c.Set(ctx, h.Node(), data, -1)
	if err != nil {
		return fmt.Errorf("local hand-over: token: %w", err)
	}
	h.token, h.version = st.Mzxid, st.Version
	return nil
}

// joinCohort returns the cohort of r's lock, made if there is none, with
// one more user.
func joinCohort(r *Handle) *cohort {
	cohorts.Lock()
	defer cohorts.Unlock()
	co := cohorts.m[r.key]
	if co == nil {
		co = &cohort{key: r.key, l: r.l, max: r.hooks.LocalHandover, perHolder: r.hooks.PerHolderTokens,
			data: r.hooks.Data, revocable: r.hooks.Revoked != nil}
		cohorts.m[r.key] = co
	}
	co.mu.Lock()
	co.users++
	co.mu.Unlock()
	return co
}

// cohortWaiting returns how many handles wait in the cohort of key, 0 when
// there is none.
func cohortWaiting(key cohortKey) int {
	cohorts.Lock()
	co := cohorts.m[key]
	cohorts.Unlock()
	if co == nil {
		return 0
	}
	co.mu.Lock()
	defer co.mu.Unlock()
	return len(co.queue)
}

// leave drops one user; the last one forgets the cohort, which holds nothing
// then (a user holds or waits until it leaves).
func (co *cohort) leave() {
	cohorts.Lock()
	defer cohorts.Unlock()
	co.mu.Lock()
	defer co.mu.Unlock()
	co.users--
	if co.users == 0 && cohorts.m[co.key] == co {
		delete(cohorts.m, co.key)
	}
}

// acquire returns a share of the cohort's hold for a local handle: at once
// when the node is held and nobody holds it locally, or when the holder
// hands it over; otherwise after the ZooKeeper acquire, which it starts if
// none is under way. Without wait it never waits for another holder, local
// or not: ErrWouldBlock (wrapped). On failure the caller holds nothing and
// the local queue is as if it had never come; the node goes with the last
// waiter.
func (co *cohort) acquire(ctx context.Context, wait bool, hooks *Hooks) (*share, error) {
	co.mu.Lock()
	busy := co.global != nil || co.acquiring || len(co.queue) > 0
	if !wait {
		if busy {
			co.mu.Unlock()
			return nil, fmt.Errorf("%w: held in this process", locking.ErrWouldBlock)
		}
		// Free here: try ZooKeeper, on this goroutine.
		co.acquiring = true
		co.mu.Unlock()
		hk := &lockhook.Hooks{}
		g, ok, err := co.l.TryAcquire(lockhook.With(ctx, hk))
		if err == nil && !ok {
			err = locking.ErrWouldBlock
		}
		co.mu.Lock()
		defer co.mu.Unlock()
		co.acquiring = false
		var h *share
		if err == nil {
			h, err = co.installLocked(g, hk, hooks)
		}
		if err != nil {
			co.startLocked(nil) // for waiters that came meanwhile
		}
		return h, err
	}
	w := &cohortWaiter{ready: make(chan struct{}), hooks: hooks}
	co.queue = append(co.queue, w)
	co.startLocked(nil)
	co.mu.Unlock()
	select {
	case <-w.ready:
		return w.hold, w.err
	case <-ctx.Done():
	}
	co.mu.Lock()
	for i, q := range co.queue {
		if q == w {
			co.queue = append(co.queue[:i], co.queue[i+1:]...)
			if len(co.queue) == 0 && co.stop != nil {
				co.stop() // the last one: the node goes
			}
			co.mu.Unlock()
			return nil, ctx.Err()
		}
	}
	co.mu.Unlock()
	// Granted (or failed) as ctx ended: the grant wins a race it cannot
	// be told apart from, as the loop's does; give it back.
	<-w.ready
	if w.err != nil {
		return nil, w.err
	}
	dctx, cancel := co.l.Client().CleanupContext(ctx)
	defer cancel()
	_ = w.hold.Release(dctx)
	return nil, ctx.Err()
}

// startLocked starts the ZooKeeper acquire for the local queue if it needs
// one and none is under way; with r, its first node replaces r's old one
// in one transaction (see release). It returns a channel closed once that
// acquire has a node in the ZooKeeper queue (with r: and the old node is
// gone, if the transaction made the node) or has ended, nil if it started
// none.
func (co *cohort) startLocked(r *replacement) <-chan struct{} {
	if co.global != nil || co.acquiring || len(co.queue) == 0 {
		return nil
	}
	co.acquiring = true
	ctx, stop := context.WithCancel(context.Background())
	co.stop = stop
	queued := make(chan struct{})
	var once sync.Once
	markQueued := func() { once.Do(func() { close(queued) }) }
	go func() {
		defer stop()
		defer markQueued()
		hk := &lockhook.Hooks{Queued: markQueued}
		if r != nil {
			r.queued, hk.Create = markQueued, r.create
		}
		g, err := co.l.Acquire(lockhook.With(ctx, hk))
		if hook := testHookGranted.Load(); hook != nil && g != nil {
			(*hook)(g)
		}
		co.mu.Lock()
		defer co.mu.Unlock()
		co.acquiring, co.stop = false, nil
		if err != nil {
			if ctx.Err() != nil && len(co.queue) == 0 {
				return // nobody wants it any more
			}
			// A failure that is not the waiters' own: every one of
			// them gets it (closed client, retries exhausted).
			co.failLocked(err)
			return
		}
		if len(co.queue) == 0 {
			// The last waiter left as the grant came.
			// An ended ctx sends the guaranteed delete to the
			// background at once (no I/O under co.mu).
			stop()
			_ = g.Release(ctx)
			return
		}
		w := co.queue[0]
		h, err := co.installLocked(g, hk, w.hooks)
		if err != nil {
			// Granted and lost at once (the connection dropped as the
			// grant came): a loss of the node fails every local waiter,
			// as lost does for a node lost later.
			co.failLocked(err)
			return
		}
		co.queue = co.queue[1:]
		w.hold = h
		close(w.ready)
	}()
	return queued
}

// failLocked fails every local waiter with err.
func (co *cohort) failLocked(err error) {
	for _, w := range co.queue {
		w.err = err
		close(w.ready)
	}
	co.queue = nil
}

// installLocked makes g the cohort's hold and returns the first local
// share of it. A hold that has ended already (lost between the loop's
// grant and now, judged by the clock too) is not installed: its error is
// returned, and g's node is on its way out. From then on a goroutine
// waits for g's end: a loss ends the local holder and fails the waiters
// (lost), and a revocation (if revocable) stops the hand-overs.
func (co *cohort) installLocked(g *locking.Hold, hk *lockhook.Hooks, hooks *Hooks) (*share, error) {
	if err := g.Err(); err != nil {
		return nil, err
	}
	co.global, co.streak, co.lostErr, co.revoked = g, 0, nil, false
	co.handedOff, co.detach = hk.HandedOver, hk.Detach
	go func() {
		<-g.Done()
		co.lost(g, g.Err())
	}()
	if co.revocable {
		locking.WatchRevocation(g, func() { co.revoke(g) })
	}
	co.holder = co.shareLocked(hooks)
	if co.perHolder {
		// The first holder of a node: the node's czxid, at version 0
		// (unless written since, by a revocation say: then the check
		// fails, and the holder should release).
		co.holder.token = g.FencingToken()
	}
	return co.holder, nil
}

// shareLocked returns a local holder's share of the cohort's hold: the same
// node and token, its own Done and Err, and a Release that hands over
// unless the handle's MayHandOver says no at that moment.
func (co *cohort) shareLocked(hooks *Hooks) *share {
	h := newShare(co, co.global, hooks)
	if co.perHolder {
		h.token = 0 // made by the successor (perHolderToken) before it holds
	}
	return h
}

// revoke notes a revocation of g, the cohort's hold: its local holder is
// asked to release, and the node goes with that release instead of being
// handed over (the revoker asked for the lock, not for the next local
// holder to get it).
func (co *cohort) revoke(g *locking.Hold) {
	co.mu.Lock()
	if co.global != g {
		co.mu.Unlock()
		return
	}
	co.revoked = true
	h := co.holder
	co.mu.Unlock()
	if h != nil && h.revoked != nil {
		h.revoked()
	}
}

// release ends the local holder h's share: the hold passes to the next
// local waiter if there is one and the streak allows, or the node is
// deleted (guaranteed, as the mutex's Release) and the waiters queue again.
//
// The node is handed over only while it is held: its session is checked by
// the clock first (a hold is not passed on from a paused process whose
// session may be over), and a node that ended meanwhile is not passed on
// (lost then fails the local waiters). When the node goes with waiters
// here, their next node is created in the same transaction as the old
// one's delete (replacement), so a process with local waiters always has a
// node in the ZooKeeper queue, another process that waits gets the lock
// after at most max local hand-overs, on a fast network too, and gets it
// one round trip after this release. (Deleting first let the process
// back in ahead of those waiting; creating first and then deleting cost
// the next holder two round trips.) Should the transaction not be applied,
// the next node is created as usual and the old one deleted after it.
func (co *cohort) release(ctx context.Context, h *share) error {
	// The release ends h's share whatever happens.
	defer co.leave()
	co.mu.Lock()
	if co.holder != h {
		err := co.lostErr
		co.mu.Unlock()
		if err == nil {
			err = locking.ErrNotHeld
		}
		return err
	}
	co.holder = nil
	g := co.global
	// By the clock too; its end, if this ends it, is seen by the
	// goroutine that waits for it (lost fails the waiters).
	if err := g.Err(); err != nil {
		co.mu.Unlock()
		return err
	}
	if len(co.queue) > 0 && co.streak < co.max && !co.revoked && (h.mayHandOver == nil || h.mayHandOver()) {
		co.streak++
		w := co.queue[0]
		co.queue = co.queue[1:]
		w.hold = co.shareLocked(w.hooks)
		co.holder = w.hold
		handedOff := co.handedOff
		co.mu.Unlock()
		close(w.ready)
		// A local hand-over is a hand-over: counted as the loop counts
		// its own (the ZooKeeper hold's gauges and hold duration stay
		// the node's).
		if handedOff != nil {
			handedOff(ctx)
		}
		return nil
	}
	co.global = nil
	// Waiters here: their next node replaces this one (see above).
	var (
		r    *replacement
		also []string // the hold's other nodes, deleted after its own
		err  error
	)
	if len(co.queue) > 0 && co.detach != nil {
		var nodes []string
		if nodes, err = co.detach(); err == nil {
			r, also = &replacement{c: co.l.Client(), old: nodes[0]}, nodes[1:]
		}
	}
	queued := co.startLocked(r)
	co.mu.Unlock()
	if queued != nil {
		select {
		case <-queued:
		case <-ctx.Done():
		}
	}
	switch {
	case r != nil:
		err = r.deleteRest(ctx, also)
	case err == nil: // not a lost hold's (detach's error)
		err = g.Release(ctx)
	}
	if queued == nil {
		co.mu.Lock()
		co.startLocked(nil) // for waiters that came meanwhile
		co.mu.Unlock()
	}
	if err != nil && !errors.Is(err, locking.ErrNotHeld) {
		return err
	}
	return nil
}

// lost is called when the cohort's ZooKeeper hold g has ended; unless the
// cohort released it, that was a loss (or the client's Close): it ends the
// local holder's share with the same error and fails every local waiter of
// that node.
func (co *cohort) lost(g *locking.Hold, err error) {
	co.mu.Lock()
	if co.global != g {
		co.mu.Unlock()
		return // released meanwhile
	}
	holder := co.holder
	queue := co.queue
	co.global, co.holder, co.queue, co.lostErr = nil, nil, nil, err
	co.mu.Unlock()
	if holder != nil {
		holder.lose(err)
	}
	for _, w := range queue {
		w.err = err
		close(w.ready)
	}
}
