package locking

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/internal/lockhook"
)

// Loop runs the lock loop for one recipe handle on one lock path.
// It is safe for concurrent use; every Acquire makes its own node.
type Loop struct {
	c        *framework.Client
	path     string
	driver   Driver
	layout   Layout        // the driver's (DirDriver), else the zero Layout
	dir      string        // where the nodes live: path, or path/layout.Dir
	attempts AttemptDriver // the driver, if it is one
	limit    func() (int, <-chan struct{})
	log      *zap.Logger
	tel      lockTelemetry         // metrics and spans (telemetry.go)
	policy   connstate.ErrorPolicy // WithErrorPolicy's; nil: the client's
	// oneSession is WithOneSession's error; nil: an acquire goes on in
	// the next session.
	oneSession error
	// foreign is RefusingLayouts': other recipes' layouts that fail an
	// acquire with framework.ErrLayoutMismatch.
	foreign []Foreign
	err     error // set by New for bad input; returned by every call
	// nodePath is the last path a node was created at (dir/name), kept
	// so that each acquire does not join the same two strings again.
	nodePath atomic.Pointer[nodePath]
}

// nodePath is dir/name for a driver's NodeSpec name.
type nodePath struct{ name, path string }

// pathFor returns dir/name, joined once per name.
func (l *Loop) pathFor(name string) string {
	if p := l.nodePath.Load(); p != nil && p.name == name {
		return p.path
	}
	p := &nodePath{name, framework.JoinPath(l.dir, name)}
	l.nodePath.Store(p)
	return p.path
}

// Option configures Loop.
type Option func(*Loop)

// WithLimit sets the lock's limit, read before every look at the
// directory: how many holders it allows (Listing.Limit; 1 without this
// option) and a channel that closes when the limit, or any other input of
// the driver's decision, changes after that call (nil: never), so that
// waiters look again. shared.Count's Watch has this shape: the value and
// the channel taken at one instant.
func WithLimit(f func() (limit int, changed <-chan struct{})) Option {
	return func(l *Loop) { l.limit = f }
}

// WithOneSession makes every acquire live in one session, the client's when
// it begins: once that session ends, the acquire stops at once (its
// requests are cancelled) and returns err, or framework.ErrClosed after the
// client's Close, rather than go on in the next session and hold much
// later; a hold of another session is never returned. A leader's
// candidacy is one (leader.ErrSessionLost). A nil err does nothing.
func WithOneSession(err error) Option { return func(l *Loop) { l.oneSession = err } }

// WithInvalid makes every call fail with err (unless New found an error in
// its own input first): a recipe's way to report an invalid option of its
// own the way bad input is reported, by every call. A nil err does nothing.
func WithInvalid(err error) Option {
	return func(l *Loop) {
		if l.err == nil {
			l.err = err
		}
	}
}

// WithLogger sets the logger (default: the client's, named "lock").
func WithLogger(log *zap.Logger) Option { return func(l *Loop) { l.log = log } }

// New returns the loop for driver d on path. It does no I/O; a nil client,
// nil driver or invalid path is reported by every later call.
func New(c *framework.Client, path string, d Driver, opts ...Option) *Loop {
	l := &Loop{c: c, path: path, driver: d, limit: oneHolder}
	switch {
	case c == nil:
		l.err = framework.ErrNilClient
	case d == nil:
		l.err = errors.New("curator: nil driver")
	default:
		if err := framework.ValidatePath(path); err != nil {
			l.err = err
		} else if path == "/" {
			l.err = fmt.Errorf("%w: a lock cannot live at the root", framework.ErrInvalidPath)
		} else {
			l.layout, l.dir, l.err = layoutOf(path, d)
		}
		l.attempts, _ = d.(AttemptDriver)
	}
	for _, o := range opts {
		if o != nil {
			o(l)
		}
	}
	if l.log == nil {
		if c != nil {
			l.log = c.Logger().Named("lock")
		} else {
			l.log = zap.NewNop()
		}
	}
	return l
}

// oneHolder is the limit without WithLimit: one holder, for ever.
func oneHolder() (int, <-chan struct{}) { return 1, nil }

// Path returns the lock path ("" for a nil Loop).
func (l *Loop) Path() string {
	if l == nil {
		return ""
	}
	return l.path
}

// Client returns the client (nil for a nil Loop).
func (l *Loop) Client() *framework.Client {
	if l == nil {
		return nil
	}
	return l.c
}

// Err returns the error New found in its input, or nil; framework.ErrNilHandle for
// a nil Loop.
func (l *Loop) Err() error {
	if l == nil {
		return framework.ErrNilHandle
	}
	return l.err
}

// Acquire creates a node and blocks until it holds the lock, ctx ends, or
// the client closes. On any failure the node is deleted before Acquire
// returns (a guaranteed delete continues in the background if the
// connection is down), the attempt is ended (AttemptDriver), and the error
// is non-nil: ctx's error (errors.Is context.Canceled / DeadlineExceeded),
// framework.ErrClosed, ErrLockLost when the node kept being lost (or the
// attempt aborted) past the retry policy, an error of the driver, or the
// ZooKeeper error that the retry policy gave up on. The error does not name
// the lock path: the recipe's error around it does, once ("mutex /locks/a:
// acquire: ...").
func (l *Loop) Acquire(ctx context.Context) (*Hold, error) { return l.acquire(ctx, true) }

// TryAcquire is Acquire that never waits for another holder: when others
// hold the lock (or a driver's Begin says ErrWouldBlock) it returns (nil,
// false, nil) and leaves no node, as every handle's try variant does (busy
// is not an error). On failure it returns a non-nil error, as Acquire.
func (l *Loop) TryAcquire(ctx context.Context) (*Hold, bool, error) {
	h, err := l.acquire(ctx, false)
	if errors.Is(err, ErrWouldBlock) {
		return nil, false, nil
	}
	return h, err == nil, err
}

// acquire is Acquire, waiting or not; without wait, a busy lock is
// ErrWouldBlock. The lockhook.Hooks that ctx carries, if any, hear of each
// node created (so in the ZooKeeper queue), may make the first node
// themselves (a cohort that gives its node up keeps its place by creating
// the next one in the same transaction as the old one's delete), and get
// the hold's hand-over count and its Detach.
func (l *Loop) acquire(ctx context.Context, wait bool) (h *Hold, err error) {
	if l == nil {
		return nil, framework.ErrNilHandle
	}
	if l.err != nil {
		return nil, l.err
	}
	if ctx == nil {
		return nil, fmt.Errorf("%w: nil context", framework.ErrInvalidOption)
	}
	hooks := lockhook.From(ctx)
	ctx, acq := l.startAcquire(ctx, wait)
	defer func() { acq.end(ctx, h, err, hooks) }()
	if l.oneSession != nil {
		var end func(*Hold, error) (*Hold, error)
		ctx, end = l.inOneSession(ctx)
		defer func() { h, err = end(h, err) }()
	}
	start := time.Now()
	for recreates := 0; ; recreates++ {
		att, err := l.begin(ctx, wait)
		if err != nil {
			return nil, err
		}
		att.tel = &acq
		spec := l.driver.Node()
		// The Stat of our node (its czxid is the fencing token, its owner
		// the session it lives in) comes with the create's reply, and the
		// first listing is sent right behind the create: ZooKeeper answers
		// a session's requests in order, so the listing shows our node and
		// an uncontended acquire costs one round trip.
		var made struct { // one allocation for both
			stat  zk.Stat
			first []string
		}
		var node string
		if recreates == 0 && hooks != nil && hooks.Create != nil {
			node, err = l.createBy(ctx, hooks.Create, spec, &made.stat, &made.first)
		}
		if node == "" && err == nil {
			node, err = l.c.Create(ctx, l.pathFor(spec.Name), spec.Data,
				framework.WithMode(spec.Mode), framework.Protected(), framework.CreatingParentContainers(),
				framework.StoringStatIn(&made.stat), framework.ListingParent(&made.first))
		}
		switch {
		case err == nil:
			acq.created(node)
			if hooks != nil && hooks.Queued != nil {
				hooks.Queued()
			}
			// The listing is handed over, not kept here: with thousands of
			// waiters, each keeping the listing it started with would hold
			// their square in memory.
			first := made.first
			made.first = nil
			var h *Hold
			if h, err = l.wait(ctx, node, &made.stat, first, wait, &att); err == nil {
				h.attach(att.Nodes)
				att.end(ctx)
				if hooks != nil {
					hooks.Detach = h.detach
				}
				return h, nil
			}
		case node != "" && errors.Is(err, zk.ErrNoNode):
			// Created, but the Stat or the listing that followed found
			// no node: ours went (with its session), and its container
			// with it. Start over, as when it goes while we wait.
			err = errRecreate
		}
		if node != "" {
			l.deleteNode(ctx, node)
		}
		att.dropNodes(ctx, l.c)
		att.end(ctx)
		if !errors.Is(err, errRecreate) {
			return nil, err
		}
		// Our node is gone or belongs to a dead session, or the attempt
		// was aborted: begin a new one, under the client's retry policy.
		sleep, ok := l.c.RetryPolicy().AllowRetry(recreates, time.Since(start))
		if !ok {
			return nil, fmt.Errorf("%w: node lost or attempt aborted %d times while waiting", ErrLockLost, recreates+1)
		}
		l.log.Info("own node lost or attempt aborted while waiting; starting over", zap.String("node", node))
		if err := l.c.Pause(ctx, sleep); err != nil {
			return nil, err
		}
	}
}

// createBy makes the attempt's node with the caller's create
// (lockhook.Hooks.Create), then reads what the loop's own create brings
// back with its reply: the node's Stat and the directory's listing, the
// two in one round trip. "" with a nil error: create made no node, the
// loop creates as usual.
func (l *Loop) createBy(ctx context.Context, create func(context.Context, string, []byte, framework.Mode) (string, error),
	spec NodeSpec, stat *zk.Stat, children *[]string) (string, error) {
	node, err := create(ctx, l.pathFor(spec.Name), spec.Data, spec.Mode)
	if node == "" || err != nil {
		return node, err
	}
	var (
		g  errgroup.Group
		st *zk.Stat
	)
	g.Go(func() (err error) {
		st, err = l.c.Exists(ctx, node)
		return err
	})
	kids, _, err := l.c.Children(ctx, l.dir)
	if serr := g.Wait(); err == nil {
		err = serr
	}
	switch {
	case err != nil:
		return node, err
	case st == nil:
		return node, zk.ErrNoNode // gone already: the loop starts over
	}
	*stat, *children = *st, kids
	return node, nil
}

// errRecreate means our node is missing or belongs to a dead session, or
// the attempt was aborted: start over with a new attempt.
var errRecreate = errors.New("own node lost")

// waiter is one node of ours waiting for the lock: the state of one
// attempt's wait, whichever its mode.
type waiter struct {
	l    *Loop
	node string // our node's path
	own  string // its name
	// stat is our node's Stat (its czxid is the fencing token, its owner
	// the session it lives in); nil when it must be read again, after the
	// connection that carried our watches went.
	stat  *zk.Stat
	first []string // the listing that came with the create, until used
	wait  bool     // false: a try, which never waits for other holders
	att   *Attempt
	sess  *framework.Session // the session our node lives in
}

// look is one look at the lock: a listing, and the driver's verdict on it.
type look struct {
	v       Verdict
	in      Listing         // what the driver decided on
	changed <-chan struct{} // closes when the limit changes after the look
	// children is the children watch this listing armed, if asked to.
	children <-chan zk.Event
}

// wait is the loop proper, for one node of ours, created with Stat stat;
// first is the listing that came with the create (nil if none), att the
// attempt the node belongs to. A node that does not hold waits in the
// layout's mode: on the nodes ahead that the driver names (waitNodes) or
// on the directory's children (waitChildren); the package documentation
// says why each is sound.
func (l *Loop) wait(ctx context.Context, node string, stat *zk.Stat, first []string, wait bool, att *Attempt) (*Hold, error) {
	w := &waiter{l: l, node: node, stat: stat, first: first, wait: wait, att: att, sess: l.c.Session()}
	_, w.own = framework.SplitPath(node)
	// Our node lives as long as its session: once that is lost, waiting
	// is pointless (a watch set again by a retry would be in the new
	// session, but our node died with the old one).
	if w.sess.ID() != stat.EphemeralOwner || (att.Session != 0 && att.Session != stat.EphemeralOwner) {
		return nil, errRecreate
	}
	err := l.refuseForeign(ctx, first)
	if err == nil && att.Check != nil {
		err = att.Check(ctx, first)
	}
	if errors.Is(err, zk.ErrNoNode) {
		return nil, errRecreate // the path went, and our node with it
	}
	if err != nil {
		return nil, err
	}
	if l.layout.WatchChildren {
		return w.waitChildren(ctx)
	}
	return w.waitNodes(ctx)
}

// waitNodes waits on at most three nodes, watched in one round trip: P, the
// node the driver names; PP, the node the driver would name if P were gone
// (unless P's deletion alone lets us hold); and our own. When PP goes it
// lists again while P still holds, off the critical path, and usually
// finds P alone ahead; then P's deletion grants the lock with no request.
func (w *waiter) waitNodes(ctx context.Context) (*Hold, error) {
	l := w.l
	ws := watchSet{l: l, node: w.node} // chs made when first needed
	for {
		h, lk, err := w.look(ctx, false)
		if h != nil || err != nil {
			return h, err
		}
		p := lk.v.Watch
		grant, pp := l.withoutP(lk.in, p)
		grant = grant && lk.v.HeldWhenGone
		gone, err := ws.set(ctx, p, pp)
		if err != nil {
			return nil, err
		}
		if gone {
			continue // P or PP went between the listing and the watch: look again
		}
		l.log.Debug("waiting", zap.String("node", w.node), zap.String("watch", p),
			zap.String("watchAlso", pp), zap.Bool("heldWhenGone", grant))
		if err := w.waiting(p); err != nil {
			return nil, err
		}
		select {
		case ev := <-ws.chs[p]:
			delete(ws.chs, p)
			l.log.Debug("watch fired", zap.String("node", w.node), zap.Stringer("event", ev.Type))
			if ev.Type == zk.EventNodeDeleted && grant && !closed(lk.changed) {
				return w.granted(ctx, &ws)
			}
			if ev.Type == zk.EventNotWatching {
				w.stat = nil // the session may be gone: check our node again
				ws.reset()
			}
		case ev := <-ws.chs[pp]: // nil channel when pp is "": never ready
			delete(ws.chs, pp)
			l.log.Debug("watch before the predecessor fired", zap.String("node", w.node), zap.Stringer("event", ev.Type))
			// PP went: list again, off the critical path while P holds.
			// (Deciding on the last listing without PP instead, with no
			// request, was measured to cost a read and half a round trip
			// more per acquisition: 8 requests and 1.7 round trips per
			// contended cycle at RTT 2 ms instead of 7 and 1.2.)
			if ev.Type == zk.EventNotWatching {
				w.stat = nil
				ws.reset()
			}
		case ev := <-ws.own:
			ws.own = nil
			switch ev.Type {
			case zk.EventNodeDeleted:
				return nil, errRecreate
			case zk.EventNotWatching:
				w.stat = nil
				ws.reset()
			}
		// A change of the limit, an aborted attempt, the end of our
		// node's session or of ctx: the next look says which.
		case <-lk.changed:
		case <-w.att.Abort:
		case <-w.sess.Done():
		case <-ctx.Done():
		}
	}
}

// granted is P's deletion granting the lock: with no request when our
// node's watch proves it existed in our live session when P went (see
// watchSet.ownAlive), else after one read of it.
func (w *waiter) granted(ctx context.Context, ws *watchSet) (*Hold, error) {
	if ws.ownAlive(w.stat) {
		return w.l.hold(w.node, w.stat), nil
	}
	st, err := w.l.c.Exists(ctx, w.node)
	if err != nil {
		return nil, err
	}
	if st == nil || st.EphemeralOwner != w.l.c.SessionID() {
		return nil, errRecreate
	}
	return w.l.hold(w.node, st), nil
}

// waitChildren waits on a children watch of the directory (which our own
// node's deletion fires too) and looks again at every change: one watch,
// and a read before every grant. The listing behind the create sets no
// watch, so a node that holds at once leaves none behind; a look for
// another reason (a change of the limit) keeps a pending watch rather than
// arm another: each would stay pending, with a goroutine in a namespace,
// until the directory changes.
func (w *waiter) waitChildren(ctx context.Context) (*Hold, error) {
	var children <-chan zk.Event // the pending watch; nil while none is armed
	for {
		h, lk, err := w.look(ctx, children == nil)
		if h != nil || err != nil {
			return h, err
		}
		if lk.children != nil {
			children = lk.children
		}
		if children == nil {
			continue // the listing behind the create: list again, with the watch
		}
		w.l.log.Debug("waiting for the directory", zap.String("node", w.node))
		if err := w.waiting(""); err != nil {
			return nil, err
		}
		select {
		case ev := <-children:
			children = nil // fired: the next listing arms a new one
			w.l.log.Debug("directory changed", zap.String("node", w.node), zap.Stringer("event", ev.Type))
			if ev.Type == zk.EventNotWatching {
				w.stat = nil
			}
		case <-lk.changed: // as in waitNodes: the next look says why
		case <-w.att.Abort:
		case <-w.sess.Done():
		case <-ctx.Done():
		}
	}
}

// look takes the limit, lists the directory (or takes the listing that
// came with the create, which sets no watch), checks that our node is
// still ours and asks the driver. With arm, a listing it makes sets a
// children watch (look.children). It returns the hold when our node holds,
// ErrWouldBlock when it does not and the acquire is a try.
func (w *waiter) look(ctx context.Context, arm bool) (*Hold, look, error) {
	l := w.l
	var lk look
	if w.first == nil {
		// Woken from a wait, perhaps by its end.
		if err := w.interrupted(ctx); err != nil {
			return nil, lk, err
		}
	}
	// The limit and its change channel, before the listing: a change
	// after this closes the channel, and the waiter looks again.
	lk.in.Limit, lk.changed = l.limit()
	if w.first != nil {
		lk.in.Sorted, w.first = l.sortListing(w.first, w.node), nil
	} else {
		sorted, st, ch, err := l.list(ctx, w.node, w.stat == nil, arm)
		if errors.Is(err, zk.ErrNoNode) {
			// The directory is gone, so our node is too (its container
			// was reaped after our session ended).
			return nil, lk, errRecreate
		}
		if err != nil {
			return nil, lk, err
		}
		lk.in.Sorted, lk.children = sorted, ch
		if st != nil {
			w.stat = st
		}
	}
	lk.in.Own = w.own
	w.att.tel.listed(lk.in.Sorted, w.own)
	if w.stat == nil || w.stat.EphemeralOwner != l.c.SessionID() || indexOf(lk.in.Sorted, w.own) < 0 {
		return nil, lk, errRecreate
	}
	v, err := l.driver.GetsTheLock(lk.in)
	if err != nil {
		return nil, lk, err
	}
	lk.v = v
	if v.Held {
		return l.hold(w.node, w.stat), lk, nil
	}
	if !w.wait {
		return nil, lk, ErrWouldBlock
	}
	return nil, lk, nil
}

// waiting is said once the watches of a look are set, before the waiter
// blocks on them (watch is the node watched ahead, "" for a directory).
// Never wait on a node of a dead session: the session may have ended while
// the watches were being set, which may then be in the new session.
func (w *waiter) waiting(watch string) error {
	if w.l.c.SessionID() != w.stat.EphemeralOwner {
		return errRecreate
	}
	w.att.tel.watching(watch)
	return nil
}

// interrupted returns why the wait must end, if it must: ctx ended, the
// attempt was aborted (start over), or our node's session ended: the
// client's Close (framework.ErrClosed), or a lost session (start over with
// a new node).
func (w *waiter) interrupted(ctx context.Context) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case closed(w.att.Abort):
		return errRecreate
	case !closed(w.sess.Done()):
		return nil
	case closed(w.l.c.Done()):
		return framework.ErrClosed
	default:
		return errRecreate
	}
}

// closed reports whether ch is closed (a nil ch never is).
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// withoutP asks the driver about the listing without p. If our node would
// hold, held is true: p's deletion alone lets us hold (the loop's check of
// a driver's HeldWhenGone claim, as far as a listing can tell). Otherwise pp
// is what the driver would watch then: the node whose deletion may leave p
// alone in our way, watched too so that we can list again while p still
// holds.
func (l *Loop) withoutP(in Listing, p string) (held bool, pp string) {
	if p == in.Own {
		return false, ""
	}
	in.Sorted = without(in.Sorted, p)
	v, err := l.driver.GetsTheLock(in)
	switch {
	case err != nil:
		return false, ""
	case v.Held:
		return true, ""
	case v.Watch == in.Own:
		return false, ""
	default:
		return false, v.Watch
	}
}

// without returns a copy of sorted without name.
func without(sorted []string, name string) []string {
	rest := make([]string, 0, len(sorted))
	for _, c := range sorted {
		if c != name {
			rest = append(rest, c)
		}
	}
	return rest
}

// watchSet is the watches one acquire keeps while it waits: on nodes ahead,
// by name (kept across looks, so a node watched again costs nothing), and
// on its own node. All are go-zookeeper's ordered channels (GetWOrdered).
type watchSet struct {
	l    *Loop
	node string                     // our node's path
	chs  map[string]<-chan zk.Event // pending watches on nodes ahead
	own  <-chan zk.Event            // pending watch on our node; nil if none
	// since is the client's state-change channel from before the first
	// watch was set: once it is closed, event order proves nothing.
	since <-chan struct{}
}

// reset forgets every watch: the connection that carried them is gone
// (EventNotWatching), so they will not fire.
func (ws *watchSet) reset() {
	clear(ws.chs)
	ws.own, ws.since = nil, nil
}

// set watches p, pp (if not "") and our node, those not watched yet, in one
// round trip. gone reports that p or pp no longer exists; a missing own
// node is errRecreate.
func (ws *watchSet) set(ctx context.Context, p, pp string) (gone bool, err error) {
	if ws.since == nil {
		ws.since = ws.l.c.StateChanged()
	}
	type result struct {
		name string
		ch   <-chan zk.Event
		err  error
	}
	var want []string
	for _, n := range []string{p, pp} {
		if _, ok := ws.chs[n]; n != "" && !ok {
			want = append(want, n)
		}
	}
	_, ownName := framework.SplitPath(ws.node)
	if ws.own == nil {
		want = append(want, ownName)
	}
	if len(want) == 0 {
		return false, nil
	}
	if ws.chs == nil {
		ws.chs = make(map[string]<-chan zk.Event)
	}
	// Each result is judged below (a missing node ahead is news, not a
	// failure), so the goroutines report no error to the group.
	results := make([]result, len(want))
	var g errgroup.Group
	c, dir := ws.l.c, ws.l.dir // the goroutines must not capture ws
	for i, n := range want {
		g.Go(func() error {
			_, _, ch, err := c.GetWOrdered(ctx, framework.JoinPath(dir, n))
			results[i] = result{n, ch, err}
			return nil
		})
	}
	_ = g.Wait()
	for _, r := range results {
		switch {
		case errors.Is(r.err, zk.ErrNoNode) && r.name == ownName:
			return false, errRecreate
		case errors.Is(r.err, zk.ErrNoNode):
			gone = true
		case r.err != nil:
			err = r.err
		case r.name == ownName:
			ws.own = r.ch
		default:
			ws.chs[r.name] = r.ch
		}
	}
	return gone, err
}

// ownAlive reports, without a request, whether our node surely existed in
// our live session when the event just received was sent: its watch is
// set and has no event waiting (an earlier deletion would be waiting
// there), no state change happened since the watches were set (the order
// of events is only known within one connection), and the session is the
// node's.
func (ws *watchSet) ownAlive(stat *zk.Stat) bool {
	if ws.own == nil {
		return false
	}
	select {
	case <-ws.since:
		return false
	default:
	}
	select {
	case <-ws.own:
		ws.own = nil
		return false
	default:
	}
	return ws.l.c.SessionID() == stat.EphemeralOwner
}

// list returns the sorted listing of the directory (see sortListing) and,
// with withStat, our node's Stat, read concurrently so the two cost one
// round trip; with watch, the listing sets a children watch, returned. A nil
// Stat with no error means our node is gone.
func (l *Loop) list(ctx context.Context, node string, withStat, watch bool) ([]string, *zk.Stat, <-chan zk.Event, error) {
	var (
		g    errgroup.Group
		stat *zk.Stat
	)
	if withStat {
		g.Go(func() (err error) {
			stat, err = l.c.Exists(ctx, node)
			return err
		})
	}
	var (
		children []string
		ch       <-chan zk.Event
		err      error
	)
	if watch {
		children, _, ch, err = l.c.ChildrenW(ctx, l.dir)
	} else {
		children, _, err = l.c.Children(ctx, l.dir)
	}
	statErr := g.Wait()
	if err != nil {
		return nil, nil, nil, err
	}
	if statErr != nil {
		return nil, nil, nil, statErr
	}
	return l.sortListing(children, node), stat, ch, nil
}

// sortListing returns what GetsTheLock decides on: with the layout's
// AllChildren, every participant among children in sequence order and the
// other children after them; otherwise only the participants up to and
// including our node (the path node), in sequence order. Nodes behind ours
// cannot change a decision (new nodes only join behind), and leaving them
// out keeps a listing in a deep queue from costing a sort of the whole
// queue: a waiter lists again at every hand-over ahead of it, and in a
// queue of 10,000 the sort was most of the client's work.
func (l *Loop) sortListing(children []string, node string) []string {
	if l.layout.AllChildren {
		return sortChildren(children, l.driver.Sequence, true)
	}
	_, name := framework.SplitPath(node)
	own, ok := l.driver.Sequence(name)
	if !ok {
		return sortChildren(children, l.driver.Sequence, false)
	}
	return sortChildrenUpTo(children, l.driver.Sequence, own)
}

// Participants returns the participants' node paths in sequence order; for
// the mutex the holder comes first.
func (l *Loop) Participants(ctx context.Context) ([]string, error) {
	if l == nil {
		return nil, framework.ErrNilHandle
	}
	if l.err != nil {
		return nil, l.err
	}
	children, _, err := l.c.Children(ctx, l.dir)
	if errors.Is(err, zk.ErrNoNode) {
		return []string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lock %s: participants: %w", l.path, err)
	}
	sorted := SortChildren(children, l.driver.Sequence)
	for i, s := range sorted {
		sorted[i] = framework.JoinPath(l.dir, s)
	}
	return sorted, nil
}

// deleteNode deletes a node of ours after a failed acquire, within the
// bounds of the client's CleanupContext; the delete is guaranteed, so past them it goes on in
// the background until it succeeds or the client closes.
func (l *Loop) deleteNode(ctx context.Context, node string) {
	dctx, cancel := l.c.CleanupContext(ctx)
	defer cancel()
	if err := l.c.Delete(dctx, node, framework.Guaranteed(), framework.Quietly()); err != nil {
		l.log.Info("deleting own node continues in the background", zap.String("node", node), zap.Error(err))
	}
}

// inOneSession returns ctx, ended too when the client's current session
// ends (WithOneSession), and the function that settles the acquire's
// result: the option's error once that session ended, and never a hold of
// another session.
func (l *Loop) inOneSession(ctx context.Context) (context.Context, func(*Hold, error) (*Hold, error)) {
	sess := l.c.Session()
	sctx, cancel := context.WithCancelCause(ctx)
	stop := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-sess.Done():
			cancel(l.oneSession)
		case <-stop:
		}
	}()
	return sctx, func(h *Hold, err error) (*Hold, error) {
		close(stop)
		<-stopped
		ended := errors.Is(context.Cause(sctx), l.oneSession)
		cancel(nil)
		if err == nil && h.Session() != sess.ID() {
			dctx, cancel := l.c.CleanupContext(ctx)
			_ = h.Release(dctx)
			cancel()
			h, err, ended = nil, l.oneSession, true
		}
		if err == nil || ctx.Err() != nil || !ended {
			return h, err
		}
		select {
		case <-l.c.Done():
			return nil, framework.ErrClosed
		default:
			return nil, l.oneSession
		}
	}
}
