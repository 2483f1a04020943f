package framework

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/internal/oneshot"
	"github.com/gocurator/curator/internal/telemetry/clienttel"
	"github.com/gocurator/curator/internal/watchq"
	"github.com/gocurator/curator/internal/zkconn"
	"github.com/gocurator/curator/internal/zkwire"
)

// WatchEventType is what happened to a watched path.
type WatchEventType int

const (
	// WatchCreated: the node was created.
	WatchCreated WatchEventType = iota + 1
	// WatchDeleted: the node was deleted.
	WatchDeleted
	// WatchDataChanged: the node's data was set.
	WatchDataChanged
	// WatchChildrenChanged: a child of the watched node was created or
	// deleted (node watches only: a recursive watch reports the child's
	// own WatchCreated and WatchDeleted instead).
	WatchChildrenChanged
	// WatchResync: the client reconnected (NewSession: in a new session).
	// Changes made while it was disconnected were not seen: read again.
	WatchResync
	// WatchSynced: the marker of a call to Sync; every change the server
	// had committed when Sync was called came before it. Only Watchers
	// whose consumer calls Sync get it.
	WatchSynced
)

// ErrNotPersistent is returned by Watcher.Sync on a Watcher served by
// one-shot watches: their events are made from reads after a watch
// fires, so no marker can follow them; read the nodes again after
// Client.Sync instead.
var ErrNotPersistent = errors.New("curator: watcher not served by a persistent watch")

var watchEventNames = [...]string{"", "created", "deleted", "data-changed", "children-changed", "resync", "synced"}

func (t WatchEventType) String() string {
	if t > 0 && int(t) < len(watchEventNames) {
		return watchEventNames[t]
	}
	return fmt.Sprintf("WatchEventType(%d)", int(t))
}

// WatchEvent is one change seen by a Watcher.
type WatchEvent struct {
	Type WatchEventType
	// Path is the path that changed, as the caller names it (namespace
	// and chroot stripped); the watched path for WatchResync.
	Path string
	// Zxid is the transaction that made the change, from ZooKeeper 3.9
	// on; 0 when the server does not say.
	Zxid int64
	// Coalesced is set when the consumer was slower than the changes:
	// this event stands for several of Path, of which it is the last.
	Coalesced bool
	// NewSession is set on a WatchResync after a new session.
	NewSession bool
}

// WatchOption configures Watch.
type WatchOption func(*watchOptions)

type watchOptions struct {
	recursive bool // the subtree, not the node alone
	oneShot   bool // one-shot watches even where persistent ones exist
}

// Recursive watches the node and every node below it (segment-wise: a
// recursive watch on /a sees /a/b, never /ab).
func Recursive() WatchOption { return func(o *watchOptions) { o.recursive = true } }

// OneShot serves the Watcher with one-shot watches, as on a server
// without persistent watches, even where the server has them: the way
// Curator's TreeCache and NodeCache watch, for comparison with them and
// for servers whose persistent watches misbehave. Persistent reports
// false.
func OneShot() WatchOption { return func(o *watchOptions) { o.oneShot = true } }

// Watcher delivers the changes of a node, or of a subtree, on a channel:
// the primitive recipes that react to znodes (caches, barriers, group
// membership) build on. See Watch.
type Watcher struct {
	c         *Client
	path      string // the caller's
	full      string // the server's
	recursive bool
	sub       *zkconn.Subscriber

	out  chan WatchEvent
	q    *watchq.Queue[WatchEvent] // pending events, resync and Sync markers
	stop chan struct{}             // closed by Close
	done chan struct{}             // closed when the Watcher has ended
	wg   sync.WaitGroup

	mu       sync.Mutex
	fallback bool          // served by one-shot watches
	armed    chan struct{} // closed once the one-shot watches are first set
	armErr   error         // why Watch's own first arming failed (zk.ErrNoAuth)
	gone     bool          // Watch failed: a late subscription is taken back
	err      error
	stopOnce sync.Once
}

// newWatchQueue returns a Watcher's queue: a path's events coalesce into
// the last, flagged Coalesced; resync markers merge, NewSession if any is.
func newWatchQueue() *watchq.Queue[WatchEvent] {
	return watchq.New(func(old, cur WatchEvent) WatchEvent {
		cur.NewSession = old.NewSession || cur.NewSession
		cur.Coalesced = true
		return cur
	}, func(old, cur WatchEvent) WatchEvent {
		old.NewSession = old.NewSession || cur.NewSession
		return old
	})
}

// Watch starts watching path: the node (its creation, deletion, data and
// children), or with Recursive() the node and everything below it (every
// creation, deletion and data change; children changes are left out as
// redundant). It returns once the watch is set on the server, so a read
// made after Watch returns is followed by every later change. Events come
// on Events in the order the server made them, per path; a WatchResync
// follows every reconnection and new session. The event goroutine is
// never blocked: a consumer slower than the changes gets one event per
// path, the last (Coalesced), at the place of that last event (never
// ahead of events queued after the path's first, never behind a Sync
// marker queued after it), so memory is bounded by the number of
// paths, and nothing is dropped. The Watcher ends when ctx ends, on
// Close, or when the client closes; then Events is closed, Err says why,
// and the server's watch is removed unless another Watcher of the client
// uses it.
//
// Watch uses one persistent watch (ZooKeeper 3.6+ AddWatch) per path,
// shared by the client's Watchers of that path. On a server without
// persistent watches it falls back to one-shot watches, set again after
// each event: exists and children watches on the node, and for a Recursive
// Watcher on every node of the subtree, as Curator's TreeCache does (two
// server watches per node). Nodes the client may not read get their
// exists watch alone (it needs no permission), except that a one-shot
// Watch of a root the client may not list fails with zk.ErrNoAuth; a
// persistent one is set (AddWatch asks no permission; servers from
// 3.8.4 withhold the events of unreadable nodes). Watch runs under the
// retry policy; on failure (ErrInvalidPath, ErrClosed, zk.ErrNoAuth,
// ctx's error) it leaves nothing running and no watch on the server.
func (c *Client) Watch(ctx context.Context, path string, opts ...WatchOption) (*Watcher, error) {
	if c == nil {
		return nil, ErrNilClient
	}
	if ctx == nil {
		return nil, invalid("nil context")
	}
	if err := ValidatePath(path); err != nil {
		return nil, err
	}
	var o watchOptions
	for i, opt := range opts {
		if opt == nil {
			return nil, invalid("watch option %d is nil", i)
		}
		opt(&o)
	}
	full := c.full(path)
	if err := c.checkSize("watch", zkwire.ReadSize(full)+4, 0); err != nil {
		return nil, fmt.Errorf("watch %s: %w", path, err)
	}
	w := &Watcher{
		c: c, path: path, full: full, recursive: o.recursive,
		out:  make(chan WatchEvent),
		q:    newWatchQueue(),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	w.sub = &zkconn.Subscriber{Recursive: o.recursive, Event: w.event, Resync: w.resync}
	fallback := o.oneShot
	var err error
	if !o.oneShot {
		fallback, err = w.subscribe(ctx)
	}
	if err == nil && c.isClosed() {
		err = ErrClosed
	}
	if err != nil {
		w.mu.Lock()
		w.gone = true
		w.mu.Unlock()
		c.pw.Unsubscribe(full, w.sub)
		return nil, fmt.Errorf("watch %s: %w", path, err)
	}
	w.wg.Add(1)
	go w.run(ctx)
	if fallback {
		// Like the persistent watch, the one-shot ones are set before
		// Watch returns.
		select {
		case <-w.startFallback(true):
		case <-ctx.Done():
		}
		w.mu.Lock()
		err := w.armErr
		w.mu.Unlock()
		if err == nil {
			// The fallback also ends (and arms) when the Watcher does.
			err = ctx.Err()
		}
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("watch %s: %w", path, err)
		}
	}
	return w, nil
}

// subscribe adds the Watcher to its path's persistent watch, under the
// retry policy, and reports whether the server lacks persistent watches
// (fallback: nothing was added).
func (w *Watcher) subscribe(ctx context.Context) (bool, error) {
	c, full := w.c, w.full
	// The attempt may still run when do returns at ctx's end: fallback is
	// shared with it.
	var fallback atomic.Bool
	err := c.do(ctx, clienttel.OpWatch, func(*zk.Conn) error {
		fallback.Store(false)
		wc := c.liveWire()
		if wc == nil {
			return zk.ErrConnectionClosed
		}
		c.pw.Capable(wc) // known before the subscription: Subscribe says if lacking
		reply, ok, err := c.pw.Subscribe(full, w.sub)
		w.mu.Lock()
		gone := w.gone
		w.mu.Unlock()
		if gone {
			// Watch returned already (ctx ended while this attempt ran).
			c.pw.Unsubscribe(full, w.sub)
			return ErrClosed
		}
		switch {
		case err != nil:
			return err
		case !ok:
			fallback.Store(true)
			return nil
		case reply == nil:
			return nil
		}
		code, got := <-reply
		switch {
		case !got:
			return nil // the next connection arms it; a resync follows
		case code == zkwire.ErrOK:
			return nil
		case code == zkwire.ErrUnimplemented:
			c.pw.Unsubscribe(full, w.sub)
			fallback.Store(true)
			return nil
		}
		c.pw.Unsubscribe(full, w.sub)
		return addWatchError(code)
	})
	return fallback.Load(), err
}

func addWatchError(code int32) error {
	switch code {
	case -101:
		return zk.ErrNoNode
	case -102:
		return zk.ErrNoAuth
	case zkwire.ErrBadArguments:
		return zk.ErrBadArguments
	}
	return fmt.Errorf("addWatch: server error code %d", code)
}

// Events returns the channel of changes. It is closed when the Watcher
// ends.
func (w *Watcher) Events() <-chan WatchEvent { return w.out }

// Done returns a channel closed when the Watcher has ended.
func (w *Watcher) Done() <-chan struct{} { return w.done }

// Err returns why the Watcher ended: nil while it runs and after Close,
// ctx's error when its ctx ended, ErrClosed when the client closed.
func (w *Watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Persistent reports whether the Watcher is served by a persistent watch
// on the server (false: by one-shot watches, the server lacking them).
func (w *Watcher) Persistent() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !w.fallback
}

// Close ends the Watcher and waits until its goroutines have ended and
// the server's watch, if nobody else uses it, is being removed. It is
// idempotent.
func (w *Watcher) Close() error {
	w.stopOnce.Do(func() { close(w.stop) })
	w.wg.Wait()
	return nil
}

// queue adds an event (see internal/watchq). It never blocks (it runs on
// go-zookeeper's receive goroutine). A path's events coalesce into the
// last, at its place; a resync marker stays at the first's place, since
// the consumer reads everything again when it gets it, after every
// reconnection it stands for, and it must stay ahead of the Sync markers
// queued after it.
func (w *Watcher) queue(ev WatchEvent) {
	if ev.Type == WatchResync {
		w.q.Merge("", ev)
		return
	}
	w.q.Add(ev.Path, ev)
}

// Sync returns once the consumer has received from Events every change
// the server had committed when Sync was called: it runs a server sync
// (Client.Sync) on the watched path, then queues a WatchSynced marker
// behind the events the sync brought and waits until the consumer has
// received the marker. A consumer that handles each event before it
// receives the next has then handled them all: a cache's read-your-writes
// barrier. The consumer must keep receiving for Sync to return; Sync
// returns ctx's error when ctx ends first, ErrClosed if the Watcher
// ends, and ErrNotPersistent on a Watcher served by one-shot watches.
// It leaves nothing behind: a marker not yet received when Sync returns
// early is still delivered, and harmless.
func (w *Watcher) Sync(ctx context.Context) error {
	if w == nil {
		return ErrNilHandle
	}
	if !w.Persistent() {
		return fmt.Errorf("watcher %s: sync: %w", w.path, ErrNotPersistent)
	}
	if err := w.c.Sync(ctx, w.path); err != nil {
		return fmt.Errorf("watcher %s: sync: %w", w.path, err)
	}
	// Notifications are routed to the Watcher on the receive path, before
	// the sync's reply is read: every change committed before the sync is
	// queued by now.
	w.mu.Lock()
	if w.fallback {
		w.mu.Unlock()
		return fmt.Errorf("watcher %s: sync: %w", w.path, ErrNotPersistent)
	}
	// Events after the marker do not coalesce with those before.
	received := w.q.Mark(WatchEvent{Type: WatchSynced, Path: w.path})
	w.mu.Unlock()
	select {
	case <-received:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("watcher %s: sync: %w", w.path, ctx.Err())
	case <-w.done:
		return fmt.Errorf("watcher %s: sync: %w", w.path, ErrClosed)
	}
}

// event is the persistent watch's subscriber function (see pwSub).
func (w *Watcher) event(t zk.EventType, path string, zxid int64) bool {
	var typ WatchEventType
	switch t {
	case zk.EventNodeCreated:
		typ = WatchCreated
	case zk.EventNodeDeleted:
		typ = WatchDeleted
	case zk.EventNodeDataChanged:
		typ = WatchDataChanged
	case zk.EventNodeChildrenChanged:
		typ = WatchChildrenChanged
	default:
		return false
	}
	w.queue(WatchEvent{Type: typ, Path: w.c.strip(path), Zxid: zxid})
	return false
}

// resync is the persistent watch's resync function (see pwSub): the
// marker, and the switch to one-shot watches if the new connection's
// server lacks persistent watches.
func (w *Watcher) resync(newSession, armed bool) bool {
	w.queue(WatchEvent{Type: WatchResync, Path: w.path, NewSession: newSession})
	if armed {
		return true
	}
	w.startFallback(false)
	return false
}

// run feeds Events until the Watcher ends.
func (w *Watcher) run(ctx context.Context) {
	defer w.wg.Done()
	defer close(w.done)
	defer close(w.out)
	defer w.c.pw.Unsubscribe(w.full, w.sub)
	for {
		ev, received, ok := w.q.Next()
		if !ok {
			select {
			case <-w.q.Wake():
				continue
			case <-w.stop:
				return
			case <-ctx.Done():
				w.end(ctx.Err())
				return
			case <-w.c.ctx.Done():
				w.end(ErrClosed)
				return
			}
		}
		select {
		case w.out <- ev:
			if received != nil {
				close(received)
			}
		case <-w.stop:
			return
		case <-ctx.Done():
			w.end(ctx.Err())
			return
		case <-w.c.ctx.Done():
			w.end(ErrClosed)
			return
		}
	}
}

func (w *Watcher) end(err error) {
	w.mu.Lock()
	w.err = err
	w.mu.Unlock()
	w.stopOnce.Do(func() { close(w.stop) })
}

// startFallback switches a node Watcher to one-shot watches, and returns
// a channel closed once they are first set (or the Watcher ended). strict
// is set when Watch itself waits for the first arming: then a root the
// client may not read ends the fallback with armErr (zk.ErrNoAuth), which
// Watch returns. Otherwise (a switch at a reconnection, after Watch
// returned) such a root is watched by its existence alone, as are
// unreadable nodes below it, rather than waiting for a permission that
// may never come.
func (w *Watcher) startFallback(strict bool) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fallback {
		return w.armed
	}
	w.fallback = true
	w.armed = make(chan struct{})
	w.wg.Add(1)
	go w.runFallback(w.armed, strict)
	return w.armed
}

// failArming records why Watch's first arming failed; the fallback then
// ends, and its deferred arm lets Watch see it.
func (w *Watcher) failArming(err error) {
	w.mu.Lock()
	w.armErr = err
	w.mu.Unlock()
}

// runFallback serves the Watcher with one-shot watches (internal/oneshot)
// until it ends, queueing a WatchResync at every reconnection.
func (w *Watcher) runFallback(armed chan struct{}, strict bool) {
	defer w.wg.Done()
	arm := sync.OnceFunc(func() { close(armed) })
	defer arm()
	defer w.resyncOnReconnect()()
	o := oneshot.Watch{
		Client: oneshotClient{w.c}, Path: w.path, Strict: strict,
		Emit: w.oneShotEvent, Armed: arm, Refused: w.failArming,
	}
	if w.recursive {
		o.RunTree(w.c.ctx, w.stop)
	} else {
		o.RunNode(w.c.ctx, w.stop)
	}
}

// oneShotTypes are the Watcher's event types of oneshot's.
var oneShotTypes = [...]WatchEventType{
	oneshot.Created:         WatchCreated,
	oneshot.Deleted:         WatchDeleted,
	oneshot.DataChanged:     WatchDataChanged,
	oneshot.ChildrenChanged: WatchChildrenChanged,
}

// oneShotEvent queues what the one-shot watches saw.
func (w *Watcher) oneShotEvent(ev oneshot.Event) {
	w.queue(WatchEvent{Type: oneShotTypes[ev.Type], Path: ev.Path, Zxid: ev.Zxid})
}

// oneshotClient is the client as internal/oneshot reads it.
type oneshotClient struct{ *Client }

func (c oneshotClient) GetW(ctx context.Context, path string) ([]byte, *zk.Stat, <-chan zk.Event, error) {
	return c.Client.GetW(ctx, path)
}

// oneShotKinds are Unwatch's kinds of oneshot's.
var oneShotKinds = [...]WatchKind{
	oneshot.DataWatch:  DataWatch,
	oneshot.ExistWatch: ExistWatch,
	oneshot.ChildWatch: ChildWatch,
}

func (c oneshotClient) Unwatch(ctx context.Context, path string, kind oneshot.Kind) error {
	return c.Client.Unwatch(ctx, path, oneShotKinds[kind])
}

func (c oneshotClient) Closed() bool { return c.isClosed() }

// resyncOnReconnect queues a WatchResync at every reconnection (from a
// state listener: ordered, none missed while the fallback is busy) and
// returns the function that stops it.
func (w *Watcher) resyncOnReconnect() (stop func()) {
	lost := false
	return w.c.Listen(func(s connstate.State) {
		switch s {
		case connstate.Lost:
			lost = true
		case connstate.Reconnected:
			w.queue(WatchEvent{Type: WatchResync, Path: w.path, NewSession: lost})
			lost = false
		}
	})
}
