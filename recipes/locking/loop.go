package locking

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
)

// Loop runs the lock loop for one recipe handle on one lock path.
// It is safe for concurrent use; every Acquire makes its own node.
type Loop struct {
	c         *framework.Client
	path      string
	driver    Driver
	layout    Layout        // the driver's (DirDriver), else the zero Layout
	dir       string        // where the nodes live: path, or path/layout.Dir
	attempts  AttemptDriver // the driver, if it is one
	maxLeases func() int
	changed   func() <-chan struct{}
	log       *zap.Logger
	tel       lockTelemetry         // metrics and spans (telemetry.go)
	policy    connstate.ErrorPolicy // WithErrorPolicy's; nil: the client's
	err       error                 // set by New for bad input; returned by every call
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

// WithMaxLeases sets how many holders the lock allows, read at every
// decision (default 1). Pair it with WithChanged when it can change.
func WithMaxLeases(f func() int) Option { return func(l *Loop) { l.maxLeases = f } }

// WithChanged sets a function returning a channel that closes when the
// driver's inputs (such as max leases) change: waiters then look again. The
// loop calls the max leases function and then this one, before each look;
// the channel must close on any change after the value that call returned
// (take both at one instant, as shared.Count's Watch allows, and hand the
// channel over here), or a change between the two calls is missed.
func WithChanged(f func() <-chan struct{}) Option { return func(l *Loop) { l.changed = f } }

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
	l := &Loop{c: c, path: path, driver: d, maxLeases: func() int { return 1 }}
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
// ErrWouldBlock.
func (l *Loop) acquire(ctx context.Context, wait bool) (h *Hold, err error) {
	return l.acquireQueued(ctx, wait, nil)
}

// acquireQueued is acquire, calling queued (if set) each time a node of
// this acquire has been created, so in the ZooKeeper queue, before it
// waits: a cohort that gives its node up keeps its place in the queue by
// deleting the old node only after that.
func (l *Loop) acquireQueued(ctx context.Context, wait bool, queued func()) (h *Hold, err error) {
	if l == nil {
		return nil, framework.ErrNilHandle
	}
	if l.err != nil {
		return nil, l.err
	}
	if ctx == nil {
		return nil, fmt.Errorf("%w: nil context", framework.ErrInvalidOption)
	}
	ctx, acq := l.startAcquire(ctx, wait)
	defer func() { acq.end(ctx, h, err) }()
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
		node, err := l.c.Create(ctx, l.pathFor(spec.Name), spec.Data,
			framework.WithMode(spec.Mode), framework.Protected(), framework.CreatingParentContainers(),
			framework.StoringStatIn(&made.stat), framework.ListingParent(&made.first))
		switch {
		case err == nil:
			acq.created(node)
			if queued != nil {
				queued()
			}
			// The listing is handed over, not kept here: with thousands of
			// waiters, each keeping the listing it started with would hold
			// their square in memory.
			first := made.first
			made.first = nil
			var h *Hold
			if h, err = l.wait(ctx, node, &made.stat, first, wait, &att); err == nil {
				att.end(ctx)
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

// errRecreate means our node is missing or belongs to a dead session, or
// the attempt was aborted: start over with a new attempt.
var errRecreate = errors.New("own node lost")

// wait is the loop proper, for one node of ours, created with Stat stat;
// first is the listing that came with the create (nil if none), att the
// attempt the node belongs to.
//
// A waiter watches the node its driver names (P) and, unless P's deletion
// alone lets it hold, the node just before P (PP), plus its own node: at
// most three watches, set in one round trip. When PP goes it lists again
// while P still holds, off the critical path, and usually finds P alone
// ahead; then P's deletion grants the lock with no request at all, so a
// hand-over costs the holder's delete and its notification, one round trip
// instead of two. Each delete notifies at most the two waiters that watch
// it: no herd. The grant without a read is sound because nodes only join
// behind ours (the driver vouches for that with HeldWhenGone, and the loop
// checks the rest by asking the driver about the listing without P, which
// also names PP: what the driver would watch then), and
// because our own node is watched too: events of a session arrive in the
// order the server sent them, so no deletion of our node came before P's.
// After any state change the ordering argument is void (watches are set
// again on reconnection in no particular order), and the loop reads
// instead.
//
// With the layout's WatchChildren, a waiter instead lists the directory
// with a children watch (which our own node's deletion fires too) and looks
// again at every change: one watch, and a read before every grant.
func (l *Loop) wait(ctx context.Context, node string, stat *zk.Stat, first []string, wait bool, att *Attempt) (*Hold, error) {
	_, own := framework.SplitPath(node)
	ws := watchSet{l: l, node: node} // chs made when first needed
	// Our node lives as long as its session: once that is lost, waiting
	// is pointless (a watch set again by a retry would be in the new
	// session, but our node died with the old one).
	sess := l.c.Session()
	if sess.ID() != stat.EphemeralOwner {
		return nil, errRecreate
	}
	if att.Check != nil {
		err := att.Check(ctx)
		if errors.Is(err, zk.ErrNoNode) {
			return nil, errRecreate // the path went, and our node with it
		}
		if err != nil {
			return nil, err
		}
	}
	// children is the pending children watch of the directory
	// (WatchChildren), nil while none is armed. A look for another reason
	// (a change of maxLeases) keeps it rather than arm another: each would
	// stay pending, with a goroutine in a namespace, until the directory
	// changes.
	var children <-chan zk.Event
	for {
		// maxLeases then changed: see WithChanged for the contract that
		// keeps a change between the two calls from being missed.
		max := l.maxLeases()
		var changed <-chan struct{}
		if l.changed != nil {
			changed = l.changed()
		}
		var sorted []string
		switch {
		case first != nil:
			// The listing sent behind the create set no watch: a node
			// that holds at once leaves none behind.
			sorted, first = l.sortListing(first, node), nil
		default:
			arm := l.layout.WatchChildren && children == nil
			var (
				st  *zk.Stat
				ch  <-chan zk.Event
				err error
			)
			sorted, st, ch, err = l.list(ctx, node, stat == nil, arm)
			if errors.Is(err, zk.ErrNoNode) {
				// The directory is gone, so our node is too (its container
				// was reaped after our session ended).
				return nil, errRecreate
			}
			if err != nil {
				return nil, err
			}
			if arm {
				children = ch
			}
			if st != nil {
				stat = st
			}
		}
		att.tel.listed(sorted, own)
		if stat == nil || stat.EphemeralOwner != l.c.SessionID() || indexOf(sorted, own) < 0 {
			return nil, errRecreate
		}
		v, err := l.driver.GetsTheLock(sorted, own, max)
		if err != nil {
			return nil, err
		}
		if v.Held {
			return l.hold(node, stat), nil
		}
		if !wait {
			return nil, ErrWouldBlock
		}
		var (
			p, pp string // the nodes watched ahead of ours; "" for none
			grant bool   // P's deletion alone lets us hold
		)
		if l.layout.WatchChildren {
			if children == nil {
				continue // list again, with the watch
			}
		} else {
			p = v.Watch
			grant, pp = l.withoutP(sorted, own, p, max)
			grant = grant && v.HeldWhenGone
			gone, err := ws.set(ctx, p, pp)
			if err != nil {
				return nil, err
			}
			if gone {
				continue // P or PP went between the listing and the watch: look again
			}
		}
		l.log.Debug("waiting", zap.String("node", node), zap.String("watch", p),
			zap.String("watchAlso", pp), zap.Bool("heldWhenGone", grant),
			zap.Bool("watchChildren", l.layout.WatchChildren))
		if l.c.SessionID() != stat.EphemeralOwner {
			// The session ended while the watches were being set: they
			// may be in the new session, but our node died with the old
			// one. Never wait on a node of a dead session.
			return nil, errRecreate
		}
		att.tel.watching(p)
		// With WatchChildren p and pp are "": their channels are nil and
		// never ready, as is children's in the other mode.
		select {
		case ev := <-ws.chs[p]:
			delete(ws.chs, p)
			l.log.Debug("watch fired", zap.String("node", node), zap.Stringer("event", ev.Type))
			if ev.Type == zk.EventNodeDeleted && grant && l.maxLeases() == max {
				if ws.ownAlive(stat) {
					return l.hold(node, stat), nil
				}
				st, err := l.c.Exists(ctx, node)
				if err != nil {
					return nil, err
				}
				if st == nil || st.EphemeralOwner != l.c.SessionID() {
					return nil, errRecreate
				}
				return l.hold(node, st), nil
			}
			if ev.Type == zk.EventNotWatching {
				stat = nil // the session may be gone: check our node again
				ws.reset()
			}
		case ev := <-ws.chs[pp]: // nil channel when pp is "": never ready
			delete(ws.chs, pp)
			l.log.Debug("watch before the predecessor fired", zap.String("node", node), zap.Stringer("event", ev.Type))
			// PP went: list again, off the critical path while P holds.
			// (Deciding on the last listing without PP instead, with no
			// request, was measured to cost a read and half a round trip
			// more per acquisition: 8 requests and 1.7 round trips per
			// contended cycle at RTT 2 ms instead of 7 and 1.2.)
			if ev.Type == zk.EventNotWatching {
				stat = nil
				ws.reset()
			}
		case ev := <-ws.own:
			ws.own = nil
			switch ev.Type {
			case zk.EventNodeDeleted:
				return nil, errRecreate
			case zk.EventNotWatching:
				stat = nil
				ws.reset()
			}
		case ev := <-children:
			children = nil // fired: the next listing arms a new one
			l.log.Debug("directory changed", zap.String("node", node), zap.Stringer("event", ev.Type))
			if ev.Type == zk.EventNotWatching {
				stat = nil
			}
		case <-changed:
		case <-att.Abort:
			return nil, errRecreate
		case <-sess.Done():
			select {
			case <-l.c.Done():
				return nil, framework.ErrClosed
			default:
				return nil, errRecreate
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-l.c.Done():
			return nil, framework.ErrClosed
		}
	}
}

// withoutP asks the driver about the listing without p. If our node would
// hold, held is true: p's deletion alone lets us hold (the loop's check of
// a driver's HeldWhenGone claim, as far as a listing can tell). Otherwise pp
// is what the driver would watch then: the node whose deletion may leave p
// alone in our way, watched too so that we can list again while p still
// holds.
func (l *Loop) withoutP(sorted []string, own, p string, max int) (held bool, pp string) {
	if p == own {
		return false, ""
	}
	v, err := l.driver.GetsTheLock(without(sorted, p), own, max)
	switch {
	case err != nil:
		return false, ""
	case v.Held:
		return true, ""
	case v.Watch == own:
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
	results := make([]result, len(want))
	var wg sync.WaitGroup
	c, dir := ws.l.c, ws.l.dir // the goroutines must not capture ws
	for i, n := range want {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, ch, err := c.GetWOrdered(ctx, framework.JoinPath(dir, n))
			results[i] = result{n, ch, err}
		}()
	}
	wg.Wait()
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
		stat    *zk.Stat
		statErr error
		done    chan struct{}
	)
	if withStat {
		done = make(chan struct{})
		go func() {
			defer close(done)
			stat, statErr = l.c.Exists(ctx, node)
		}()
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
	if done != nil {
		<-done
	}
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
