package locking

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gocurator/curator/framework"
)

// A cohort is the handles of one process (one client) on one lock that
// share one ZooKeeper node: lock cohorting (Dice, Marathe and Shavit,
// PPoPP 2012). The node is acquired once, in the ZooKeeper queue like any
// other participant, on behalf of every local waiter; while it is held, the
// hold passes from one local handle to the next with no request at all, at
// most max times in a row, after which the node is deleted and the local
// waiters queue again behind the other processes with a fresh node.
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
	l   *Loop // the loop of the handle that made the cohort
	max int   // local hand-overs in a row, from the handle that made it
	// perHolder gives every local holder a token of its own (see
	// perHolderToken); from the handle that made the cohort.
	perHolder bool

	mu        sync.Mutex
	global    *Hold              // the ZooKeeper hold, nil when none
	holder    *Hold              // the local holder's share of global
	streak    int                // local hand-overs since global was acquired
	acquiring bool               // a ZooKeeper acquire is under way
	stop      context.CancelFunc // ends the background acquire
	queue     []*cohortWaiter    // local waiters, first come first
	users     int                // handles acquiring or holding: the entry goes at 0
	lostErr   error              // why the last hold was lost (see lost), for its holder's Release
}

type cohortKey struct {
	c    *framework.Client
	path string
	kind string // the driver's lock name and type: handles of different recipes never share
}

// cohortWaiter is a local handle waiting for the hold.
type cohortWaiter struct {
	ready       chan struct{} // closed once hold or err is set
	hold        *Hold
	err         error
	mayHandOver func() bool // the handle's, for its share
}

// testHookGranted, if set by a test, runs between the ZooKeeper grant of a
// cohort's node and the cohort taking it: the window in which the hold can
// end before the cohort subscribes to its end.
var testHookGranted atomic.Pointer[func(*Hold)]

var cohorts = struct {
	sync.Mutex
	m map[cohortKey]*cohort
}{m: map[cohortKey]*cohort{}}

// cohortAcquire acquires l's lock for a local handle through the cohort of
// l's lock on l's client (see cohort.acquire), made with maxHandovers if
// there is none.
func cohortAcquire(ctx context.Context, l *Loop, wait bool, maxHandovers int, perHolder bool, mayHandOver func() bool) (*Hold, error) {
	co := joinCohort(l, maxHandovers, perHolder)
	h, err := co.acquire(ctx, wait, mayHandOver)
	if err != nil {
		co.leave()
		return nil, err
	}
	if co.perHolder && h.czxid == 0 {
		// A local successor: its token is still to be made.
		if err := co.perHolderToken(ctx, h); err != nil {
			// Hands over, or deletes the node on the client's one rule
			// for clean-up within (or just after) the caller's ctx.
			dctx, cancel := l.c.CleanupContext(ctx)
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
func (co *cohort) perHolderToken(ctx context.Context, h *Hold) error {
	data := co.l.driver.Node().Data
	if data == nil {
		data = co.l.c.DefaultData()
	}
	st, err := co.l.c.Set(ctx, h.node, data, -1)
	if err != nil {
		return fmt.Errorf("local hand-over: token: %w", err)
	}
	h.czxid, h.version = st.Mzxid, st.Version
	return nil
}

// joinCohort returns the cohort of l's lock, made if there is none, with
// one more user.
func joinCohort(l *Loop, maxHandovers int, perHolder bool) *cohort {
	key := keyOf(l)
	cohorts.Lock()
	defer cohorts.Unlock()
	co := cohorts.m[key]
	if co == nil {
		co = &cohort{key: key, l: l, max: maxHandovers, perHolder: perHolder}
		cohorts.m[key] = co
	}
	co.mu.Lock()
	co.users++
	co.mu.Unlock()
	return co
}

func keyOf(l *Loop) cohortKey {
	return cohortKey{c: l.c, path: l.path, kind: fmt.Sprintf("%T/%s", l.driver, l.driver.Node().Name)}
}

// cohortWaiting returns how many handles wait in the cohort of l's lock on
// l's client, 0 when there is none.
func cohortWaiting(l *Loop) int {
	cohorts.Lock()
	co := cohorts.m[keyOf(l)]
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
func (co *cohort) acquire(ctx context.Context, wait bool, mayHandOver func() bool) (*Hold, error) {
	co.mu.Lock()
	busy := co.global != nil || co.acquiring || len(co.queue) > 0
	if !wait {
		if busy {
			co.mu.Unlock()
			return nil, fmt.Errorf("%w: held in this process", ErrWouldBlock)
		}
		// Free here: try ZooKeeper, on this goroutine.
		co.acquiring = true
		co.mu.Unlock()
		g, err := co.l.acquire(ctx, false)
		co.mu.Lock()
		co.acquiring = false
		if err != nil {
			co.startLocked() // for waiters that came meanwhile
			co.mu.Unlock()
			return nil, err
		}
		h, err := co.installLocked(g, mayHandOver)
		if err != nil {
			co.startLocked() // for waiters that came meanwhile
		}
		co.mu.Unlock()
		return h, err
	}
	w := &cohortWaiter{ready: make(chan struct{}), mayHandOver: mayHandOver}
	co.queue = append(co.queue, w)
	co.startLocked()
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
	dctx, cancel := co.l.c.CleanupContext(ctx)
	defer cancel()
	_ = w.hold.Release(dctx)
	return nil, ctx.Err()
}

// startLocked starts the ZooKeeper acquire for the local queue if it needs
// one and none is under way. It returns a channel closed once that acquire
// has a node in the ZooKeeper queue or has ended, nil if it started none.
func (co *cohort) startLocked() <-chan struct{} {
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
		g, err := co.l.acquireQueued(ctx, true, markQueued)
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
		h, err := co.installLocked(g, w.mayHandOver)
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
// grant and now, before the cohort could subscribe to its end) is not
// installed: its error is returned, and g's node is on its way out.
func (co *cohort) installLocked(g *Hold, mayHandOver func() bool) (*Hold, error) {
	// g.live is safe under co.mu here: g has no end function yet, so
	// its end cannot call lost.
	if !g.live() || !g.setEnded(func(err error) { co.lost(g, err) }) {
		err := g.Err()
		if err == nil {
			err = ErrLockLost
		}
		return nil, err
	}
	co.global, co.streak, co.lostErr = g, 0, nil
	co.holder = co.shareLocked(mayHandOver)
	if co.perHolder {
		// The first holder of a node: the node's czxid, at version 0
		// (unless written since, by a revocation say: then the check
		// fails, and the holder should release).
		co.holder.czxid = g.czxid
	}
	return co.holder, nil
}

// shareLocked returns a local holder's share of the cohort's hold: the same
// node and token, its own Done and Err, and a Release that hands over
// unless mayHandOver (if set) says no at that moment.
func (co *cohort) shareLocked(mayHandOver func() bool) *Hold {
	g := co.global
	h := &Hold{c: g.c, log: g.log, node: g.node, czxid: g.czxid, session: g.session, mayHandOver: mayHandOver,
		versioned: co.perHolder}
	if co.perHolder {
		h.czxid = 0 // made by the successor (perHolderToken) before it holds
	}
	h.release = func(ctx context.Context) error { return co.release(ctx, h) }
	h.ended = func(error) { co.leave() }
	return h
}

// release ends the local holder h's share: the hold passes to the next
// local waiter if there is one and the streak allows, or the node is
// deleted (guaranteed, as the mutex's Release) and the waiters queue again.
//
// The node is handed over only while it is held: its session is checked by
// the clock first (a hold is not passed on from a paused process whose
// session may be over), and a node that ended meanwhile is not passed on
// (lost then fails the local waiters). When the node goes with waiters
// here, their new node is created before the old one is deleted, so a
// process with local waiters always has a node in the ZooKeeper queue and
// another process that waits gets the lock after at most max local
// hand-overs, on a fast network too.
func (co *cohort) release(ctx context.Context, h *Hold) error {
	// The release ends h's share whatever happens: h's end function (which
	// leaves too) can no longer run once Release has begun.
	defer co.leave()
	co.mu.Lock()
	g := co.global
	co.mu.Unlock()
	if g != nil {
		// Outside co.mu: a hold found over by the clock ends here, and
		// its end calls lost, which takes co.mu.
		g.live()
	}
	co.mu.Lock()
	if co.holder != h {
		err := co.lostErr
		co.mu.Unlock()
		if err == nil {
			err = ErrNotHeld
		}
		return err
	}
	co.holder = nil
	g = co.global
	if err := g.endedErr(); err != nil {
		// Ended since the look above: its end function (lost) is on
		// its way and fails the waiters.
		co.mu.Unlock()
		return err
	}
	// A revoked node is released whatever waits here: the revoker asked
	// for the lock, not for the next local holder to get it.
	if len(co.queue) > 0 && co.streak < co.max && !h.revoked.Load() && (h.mayHandOver == nil || h.mayHandOver()) {
		co.streak++
		w := co.queue[0]
		co.queue = co.queue[1:]
		w.hold = co.shareLocked(w.mayHandOver)
		co.holder = w.hold
		co.mu.Unlock()
		close(w.ready)
		// A local hand-over is a hand-over: counted as the loop counts
		// its own (the ZooKeeper hold's gauges and hold duration stay
		// the node's).
		t := co.l.instruments()
		t.handovers.Add(ctx, 1, t.base...)
		return nil
	}
	co.global = nil
	g.setEnded(nil)
	// Waiters here: their next node first (see above).
	queued := co.startLocked()
	co.mu.Unlock()
	if queued != nil {
		select {
		case <-queued:
		case <-ctx.Done():
		}
	}
	err := g.Release(ctx)
	if queued == nil {
		co.mu.Lock()
		co.startLocked() // for waiters that came meanwhile
		co.mu.Unlock()
	}
	if err != nil && !errors.Is(err, ErrNotHeld) {
		return err
	}
	return nil
}

// lost is called when the cohort's ZooKeeper hold ends other than by its
// release (a loss, or the client's Close): it ends the local holder's
// share with the same error and fails every local waiter of that node.
func (co *cohort) lost(g *Hold, err error) {
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
		holder.end(err, g.LostIn(), "the process's shared hold ended", false)
	}
	for _, w := range queue {
		w.err = err
		close(w.ready)
	}
}
