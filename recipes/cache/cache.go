package cache

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/framework"
)

// Cache keeps a copy of a znode, its children or its subtree in memory,
// kept current by one watch on the server: Curator's CuratorCache,
// TreeCache, PathChildrenCache and NodeCache in one type (see the
// package documentation). Reads (Get, Children, Len, Walk) come from
// memory; Listen reports each change. A Cache is safe for concurrent use.
// A nil *Cache caches nothing: its reads report nothing, Start and
// Synced return ErrNilHandle, Listen and Close do nothing.
type Cache struct {
	c      *framework.Client
	path   string
	o      options
	optErr error
	// codec decodes the data read (the client's, with CompressedData or
	// a client WithCompressionEnabled); nil: data as stored.
	codec   framework.Compression
	log     *zap.Logger
	life    context.Context // ends at Close
	cancel  context.CancelFunc
	runDone chan struct{} // closed when the event loop ends
	// readMu orders the cache's reads of the server (pipeline.go): the
	// reads that events of cached nodes cause hold it shared, several in
	// flight but one per path; loads, resyncs and Synced's settling hold
	// it alone, so that no read of a path is applied after a later one.
	readMu sync.RWMutex
	slots  chan struct{} // one per event read in flight (readsInFlight)
	flight sync.Mutex
	// inflight has, by path, a channel closed when the path's event read
	// is done; reloads, the paths an event read found to be new nodes, to
	// be read again with readMu held alone. Both under flight.
	inflight map[string]chan struct{}
	reloads  map[string]struct{}
	reload   chan struct{} // buffered: reloads has something
	// loadSessionsUsed is how many sessions the last load of more than
	// one node read over (for tests).
	loadSessionsUsed atomic.Int32

	mu        sync.RWMutex
	state     int
	nodes     *store
	listeners map[*listener]struct{}
	w         *framework.Watcher
	cancelW   context.CancelFunc
}

const (
	idle = iota
	starting
	started
	closed
)

// New returns a cache of path and, with the default options, its whole
// subtree. It does no I/O: Start loads it.
func New(c *framework.Client, path string, opts ...Option) *Cache {
	o := defaults()
	var optErr error
	for i, opt := range opts {
		if opt == nil {
			optErr = fmt.Errorf("cache: option %d is nil: %w", i, ErrInvalidOption)
			break
		}
		if err := opt(&o); err != nil {
			optErr = err
			break
		}
	}
	log := zap.NewNop()
	if c != nil {
		log = c.Logger().Named("cache").With(zap.String("path", path))
	}
	var codec framework.Compression
	if cc, byDefault := c.Compression(); o.compressed || byDefault {
		codec = cc
	}
	life, cancel := context.WithCancel(context.Background())
	return &Cache{
		c: c, path: path, o: o, optErr: optErr, log: log, codec: codec,
		life: life, cancel: cancel, runDone: make(chan struct{}),
		nodes: newStore(path, o.statsOnly), listeners: map[*listener]struct{}{},
		slots: make(chan struct{}, o.readsInFlight), inflight: map[string]chan struct{}{},
		reloads: map[string]struct{}{}, reload: make(chan struct{}, 1),
	}
}

// Start sets the cache's watch on the server and loads the cache, and
// returns once the load is done (listeners get a Created event for each
// node found, then Initialized). From then on the cache follows every
// change. While the server cannot be reached, Start keeps trying until
// ctx ends. On failure (ctx's error, ErrClosed, ErrInvalidPath,
// ErrInvalidOption, ErrStarted, zk.ErrNoAuth for a root it may not
// read, with persistent and one-shot watches alike) nothing is left
// running and no watch is left on the server; a Start that failed may be
// called again.
//
// A load that finds more than 1,000 nodes opens up to 3 more sessions to
// the same servers for the rest of the load and closes them when it ends
// (see WithLoadSessions, which sets the number; the Info log says when).
func (c *Cache) Start(ctx context.Context) error {
	if c == nil {
		return ErrNilHandle
	}
	if ctx == nil {
		return fmt.Errorf("cache %s: start: nil context: %w", c.path, ErrInvalidOption)
	}
	if c.optErr != nil {
		return fmt.Errorf("cache %s: start: %w", c.path, c.optErr)
	}
	if c.c == nil {
		return fmt.Errorf("cache %s: start: %w", c.path, ErrNilClient)
	}
	if err := framework.ValidatePath(c.path); err != nil {
		return fmt.Errorf("cache %s: start: %w", c.path, err)
	}
	c.mu.Lock()
	switch c.state {
	case starting, started:
		c.mu.Unlock()
		return fmt.Errorf("cache %s: start: %w", c.path, ErrStarted)
	case closed:
		c.mu.Unlock()
		return fmt.Errorf("cache %s: start: %w", c.path, ErrClosed)
	}
	c.state = starting
	c.mu.Unlock()
	if err := c.start(ctx); err != nil {
		c.mu.Lock()
		if c.state == starting {
			c.state = idle
		}
		c.mu.Unlock()
		if c.life.Err() != nil {
			err = ErrClosed
		}
		return fmt.Errorf("cache %s: start: %w", c.path, err)
	}
	return nil
}

func (c *Cache) start(ctx context.Context) error {
	// Calls run until Start's ctx ends or the cache closes.
	sctx, cancel := context.WithCancel(c.life)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	var wopts []framework.WatchOption
	if c.o.maxDepth != 0 {
		wopts = append(wopts, framework.Recursive())
	}
	if c.o.oneShot {
		wopts = append(wopts, framework.OneShot())
	}
	var w *framework.Watcher
	var cancelW context.CancelFunc
	for {
		changed := c.c.StateChanged()
		var err error
		if w == nil {
			// The Watcher lives until Close, not until ctx ends.
			wctx, wcancel := context.WithCancel(c.life)
			stop := context.AfterFunc(sctx, wcancel)
			w, err = c.c.Watch(wctx, c.path, wopts...)
			if !stop() || err != nil {
				wcancel()
				if w != nil {
					_ = w.Close()
					w = nil
				}
				if err == nil {
					err = sctx.Err()
				}
			} else {
				cancelW = wcancel
			}
		}
		if w != nil {
			// Changes made during the load queue in the Watcher, and are
			// read again after it.
			err = c.load(sctx, c.path)
			if err == nil {
				break
			}
		}
		if !retriable(err) || sctx.Err() != nil {
			if w != nil {
				cancelW()
				_ = w.Close()
			}
			c.mu.Lock()
			c.nodes.reset()
			c.mu.Unlock()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		c.log.Debug("start: trying again once the connection changes", zap.Error(err))
		select {
		case <-changed:
		case <-sctx.Done():
		}
	}
	c.mu.Lock()
	if c.state != starting {
		c.mu.Unlock()
		cancelW()
		_ = w.Close()
		return ErrClosed
	}
	c.state = started
	c.w, c.cancelW = w, cancelW
	c.emitLocked(Event{Type: Initialized, Path: c.path})
	c.mu.Unlock()
	c.log.Info("cache loaded", zap.Int("nodes", c.Len()), zap.Bool("persistent", w.Persistent()))
	go c.run(w)
	return nil
}

// retriable reports whether an error is one that a later connection may
// cure.
func retriable(err error) bool {
	for _, e := range []error{context.Canceled, context.DeadlineExceeded, framework.ErrClosed,
		framework.ErrInvalidPath, framework.ErrDataTooLarge, framework.ErrNilClient,
		framework.ErrAuthFailed, framework.ErrInvalidOption, zk.ErrNoAuth, zk.ErrBadArguments} {
		if errors.Is(err, e) {
			return false
		}
	}
	return true
}

// run follows the Watcher's events until the cache closes or the client
// does, then waits for the reads it started.
func (c *Cache) run(w *framework.Watcher) {
	defer close(c.runDone)
	defer c.drain()
	events := w.Events()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				if err := w.Err(); err != nil && c.life.Err() == nil {
					c.log.Info("cache stopped following changes", zap.Error(err))
				}
				return
			}
			c.handle(ev)
		case <-c.reload:
			c.readMu.Lock()
			_ = c.settleLocked(c.life)
			c.readMu.Unlock()
		}
	}
}

// handle brings the cache up to date with one event of the Watcher. The
// event says only which path to read: its type may be stale, as the
// Watcher coalesces. A cached node is read again in the background
// (reread); anything else (a new node, a resync) is done here, alone.
func (c *Cache) handle(ev framework.WatchEvent) {
	switch ev.Type {
	case framework.WatchSynced:
		return
	case framework.WatchResync:
		reason := Reconnected
		if ev.NewSession {
			reason = NewSession
		}
		c.readMu.Lock()
		defer c.readMu.Unlock()
		c.resync(reason)
		return
	}
	if !c.inTree(ev.Path) {
		c.log.Warn("event outside the cached tree: reading it all again", zap.String("event", ev.Path))
		c.readMu.Lock()
		defer c.readMu.Unlock()
		c.resync(OutOfTree)
		return
	}
	if !c.wanted(ev.Path) {
		return
	}
	c.mu.RLock()
	cached := c.nodes.find(ev.Path) != none
	c.mu.RUnlock()
	if cached {
		c.dispatch(ev.Path)
		return
	}
	c.readMu.Lock()
	defer c.readMu.Unlock()
	if err := c.refresh(c.life, ev.Path); err != nil && c.life.Err() == nil {
		// A connection problem: the reconnection's resync reads it again.
		c.log.Debug("read after event failed", zap.String("event", ev.Path), zap.Error(err))
	}
}

// resync reads the whole tree again, until it succeeds or the cache
// closes, then reports Resynced; readMu is held alone.
func (c *Cache) resync(reason ResyncReason) {
	c.takeReloads() // the load reads them
	for {
		changed := c.c.StateChanged()
		err := c.load(c.life, c.path)
		if err == nil {
			break
		}
		if c.life.Err() != nil {
			return
		}
		c.log.Debug("resync: trying again once the connection changes", zap.Error(err))
		select {
		case <-changed:
		case <-c.life.Done():
			return
		}
	}
	c.mu.Lock()
	c.emitLocked(Event{Type: Resynced, Path: c.path, Reason: reason})
	c.mu.Unlock()
	c.log.Info("cache resynced", zap.Stringer("reason", reason))
}

// inTree reports whether p is the root or below it.
func (c *Cache) inTree(p string) bool {
	return p == c.path || strings.HasPrefix(p, c.path+"/") || c.path == "/" && strings.HasPrefix(p, "/")
}

// depth is p's depth below the root (0 for the root), for a path in the
// tree.
func (c *Cache) depth(p string) int {
	if p == c.path {
		return 0
	}
	rel := strings.TrimPrefix(p, c.path)
	return strings.Count(rel, "/")
}

// wanted reports whether p, in the tree, is within the depth and passes
// the filter with all its ancestors below the root.
func (c *Cache) wanted(p string) bool {
	if p == c.path {
		return true
	}
	if c.o.maxDepth >= 0 && c.depth(p) > c.o.maxDepth {
		return false
	}
	if c.o.filter == nil {
		return true
	}
	for a := p; a != c.path; a, _ = framework.SplitPath(a) {
		if !c.o.filter(a) {
			return false
		}
	}
	return true
}

// Get returns the cached node at path (a full path, as the caller names
// it), and false if the cache holds none: the node does not exist, is
// outside the cache, or the cache is not loaded (or closed).
func (c *Cache) Get(path string) (Node, bool) {
	if c == nil {
		return Node{}, false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	id := c.nodes.find(path)
	if id == none {
		return Node{}, false
	}
	return c.nodeLocked(path, id), true
}

// nodeLocked is the cached node at slot id, whose path is p; c.mu is
// held.
func (c *Cache) nodeLocked(p string, id int32) Node {
	return Node{Path: p, Data: c.nodes.data(id), Stat: c.nodes.stat(id)}
}

// namesLocked returns the sorted names of the children of slot id; c.mu
// is held.
func (c *Cache) namesLocked(id int32) []string {
	var names []string
	c.nodes.children(id, func(k int32) bool {
		names = append(names, c.nodes.name(k))
		return true
	})
	sort.Strings(names)
	return names
}

// Children returns the sorted names of path's cached children; none if
// the node is not cached.
func (c *Cache) Children(path string) []string {
	if c == nil {
		return nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	id := c.nodes.find(path)
	if id == none {
		return nil
	}
	return c.namesLocked(id)
}

// Len returns how many nodes are cached, the root included.
func (c *Cache) Len() int {
	if c == nil {
		return 0
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.nodes.len()
}

// Walk calls fn for path's cached node and every cached node below it,
// parents before children and siblings in name order, until fn returns
// false. It walks a copy taken when it is called, so fn may call the
// cache.
func (c *Cache) Walk(path string, fn func(Node) bool) {
	if c == nil || fn == nil {
		return
	}
	var all []Node
	c.mu.RLock()
	var visit func(p string, id int32)
	visit = func(p string, id int32) {
		all = append(all, c.nodeLocked(p, id))
		for _, k := range c.namesLocked(id) {
			visit(framework.JoinPath(p, k), c.nodes.child(id, k))
		}
	}
	if id := c.nodes.find(path); id != none {
		visit(path, id)
	}
	c.mu.RUnlock()
	for _, n := range all {
		if !fn(n) {
			return
		}
	}
}

// Listen registers fn for every event of the cache from now on: a
// listener added before Start hears of each node the load finds exactly
// once (Created), then Initialized. Events come in order, on a goroutine
// of the listener's own, and are never dropped: a listener slower than
// the changes gets each path's outcome (see Event.Coalesced), so it
// never blocks the cache and its queue is bounded by the number of paths.
// cancel unregisters fn; events queued and not yet delivered are
// dropped. cancel may be called from fn, and more than once. After
// Close, Listen registers nothing and fn is never called.
func (c *Cache) Listen(fn func(Event)) (cancel func()) {
	if c == nil || fn == nil {
		return func() {}
	}
	l := newListener(fn)
	c.mu.Lock()
	if c.state == closed {
		c.mu.Unlock()
		return func() {}
	}
	c.listeners[l] = struct{}{}
	c.mu.Unlock()
	go l.run()
	return func() {
		c.mu.Lock()
		delete(c.listeners, l)
		c.mu.Unlock()
		l.stop()
	}
}

// emitLocked queues ev for every listener; c.mu is held.
func (c *Cache) emitLocked(ev Event) {
	for l := range c.listeners {
		l.push(ev)
	}
}

// Synced returns once the cache reflects every change the server had
// committed when Synced was called (read-your-writes: a write that
// returned before Synced was called is in the cache when it returns). It
// runs a server sync and waits until the cache has handled every change
// the sync brought (with one-shot watches, it reads the tree again). It
// returns ctx's error if ctx ends first, ErrNotStarted before Start has
// succeeded, ErrClosed after Close.
func (c *Cache) Synced(ctx context.Context) error {
	if c == nil {
		return ErrNilHandle
	}
	c.mu.RLock()
	state, w := c.state, c.w
	c.mu.RUnlock()
	switch state {
	case closed:
		return fmt.Errorf("cache %s: synced: %w", c.path, ErrClosed)
	case idle, starting:
		return fmt.Errorf("cache %s: synced: %w", c.path, ErrNotStarted)
	}
	err := w.Sync(ctx)
	if err == nil {
		// Every event up to the marker has been received; wait for the
		// reads they started, and make those they left.
		err = c.settle(ctx)
	} else if errors.Is(err, framework.ErrNotPersistent) {
		err = c.syncByReading(ctx)
	}
	if err != nil {
		if c.life.Err() != nil {
			err = ErrClosed
		}
		return fmt.Errorf("cache %s: synced: %w", c.path, err)
	}
	return nil
}

// syncByReading is Synced for one-shot watches: a server sync, then the
// whole tree read again (serialised with the event loop's reads).
func (c *Cache) syncByReading(ctx context.Context) error {
	if err := c.c.Sync(ctx, c.path); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(c.life, cancel)()
	if err := c.lockReads(ctx); err != nil {
		return err
	}
	defer c.readMu.Unlock()
	if err := c.load(ctx, c.path); err != nil {
		return err
	}
	c.takeReloads() // the load read them
	return nil
}

// Close stops following changes, removes the cache's watch from the
// server and stops every listener (events not yet delivered are
// dropped; a listener running at the time finishes first, and Close may
// be called from one). The cached nodes stay readable. Close is
// idempotent; it returns nil.
func (c *Cache) Close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	if c.state == closed {
		c.mu.Unlock()
		return nil
	}
	wasStarted := c.state == started
	c.state = closed
	w, cancelW := c.w, c.cancelW
	ls := c.listeners
	c.listeners = map[*listener]struct{}{}
	c.mu.Unlock()
	c.cancel()
	if wasStarted {
		cancelW()
		_ = w.Close()
		<-c.runDone
	}
	for l := range ls {
		if !l.stop() {
			<-l.done
		}
	}
	return nil
}
