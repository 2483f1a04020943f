package cache

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/gocurator/curator/framework"
)

// A read of one node: its data (nil with StatsOnly) and Stat, nil stat
// when the node is missing.
type read struct {
	data []byte
	stat *zk.Stat
	err  error // ErrNotCompressed, for the event
}

// readNode reads p: getData, or exists with StatsOnly. Data is read as
// stored and decoded here (c.codec), so that a node whose data does not
// decode is still cached, with ErrNotCompressed on its event.
func (c *Cache) readNode(ctx context.Context, cl *framework.Client, p string) (read, error) {
	if c.o.statsOnly {
		st, err := cl.Exists(ctx, p)
		return read{stat: st}, err
	}
	data, st, err := cl.Get(ctx, p, framework.Uncompressed())
	if errors.Is(err, zk.ErrNoNode) {
		return read{}, nil
	}
	if err != nil {
		return read{}, err
	}
	r := read{data: data, stat: st}
	// Empty data is left as it is: nodes made without data (parents
	// created on the way) are not compressed by either library.
	if c.codec != nil && len(data) > 0 {
		if plain, err := c.codec.Decompress(p, data); err != nil {
			r.err = fmt.Errorf("cache: decompress %s: %w: %w: %w", p, ErrNotCompressed, framework.ErrCompression, err)
		} else {
			r.data = plain
		}
	}
	return r, nil
}

// refresh brings the cache up to date with path p after an event of it:
// one read when p is a known node, a load of its subtree when it is new
// (or a new incarnation), a load from the highest uncached ancestor when
// its parent is not cached.
func (c *Cache) refresh(ctx context.Context, p string) error {
	top := p
	c.mu.RLock()
	for top != c.path {
		parent, _ := framework.SplitPath(top)
		if c.nodes.find(parent) != none {
			break
		}
		top = parent
	}
	c.mu.RUnlock()
	if top != p {
		return c.load(ctx, top)
	}
	r, err := c.readNode(ctx, c.c, p)
	if errors.Is(err, zk.ErrNoAuth) {
		c.unreadable(p, err)
		return nil
	}
	if err != nil {
		return err
	}
	c.mu.RLock()
	known := c.knownLocked(p, r)
	c.mu.RUnlock()
	if known || r.stat == nil {
		c.apply(p, r)
		return nil
	}
	return c.loadFrom(ctx, p, &r)
}

// load reads p and its subtree (within the depth and filter) and brings
// the cache in line with them: every node found is added or updated,
// every cached node not found is removed, each with its event.
func (c *Cache) load(ctx context.Context, p string) error { return c.loadFrom(ctx, p, nil) }

// loadFrom is load with p's read done already (first, if not nil).
// Reads are pipelined: up to readsInFlight workers a session take paths
// from a queue, each reading a node and then, if it has children, listing
// them and queueing them. A parent is applied before its children are
// queued, so listeners hear of parents first.
func (c *Cache) loadFrom(ctx context.Context, p string, first *read) error {
	kids, err := c.visit(ctx, c.c, p, first)
	if err != nil || len(kids) == 0 {
		return err
	}
	l := &loader{c: c, ctx: ctx, queue: kids, found: len(kids)}
	l.cond = sync.NewCond(&l.mu)
	l.add(c.c)
	whole := p == c.path
	if whole && c.o.loadSessions > 1 {
		for _, s := range c.openLoadSessions(ctx, c.o.loadSessions-1) {
			l.add(s)
			l.extra = append(l.extra, s)
		}
	}
	l.auto = whole && c.o.loadSessions == 0
	l.mu.Lock()
	l.grow()
	for l.workers > 0 {
		l.cond.Wait()
	}
	err = l.err
	l.done = true
	c.loadSessionsUsed.Store(int32(l.most))
	l.mu.Unlock()
	l.finish()
	return err
}

// autoLoad is when a load without WithLoadSessions opens more sessions:
// once it has found autoLoadNodes paths to read (a tree that one session
// reads in about a fifth of a second through a 2 ms round trip, so that a
// session's few round trips to open cost little beside the rest), up to
// autoLoadExtra more, taken from the process's budget of extra sessions
// open at once.
const (
	autoLoadNodes = 1000
	autoLoadExtra = 3
)

// autoLoadBudget holds a token for each automatic load session open in
// the process: many caches starting together (a service cache for each
// of 200 services, say) open at most cap of them, well under the 60
// connections a ZooKeeper server allows one host by default.
var autoLoadBudget = make(chan struct{}, 8)

type loader struct {
	c    *Cache
	ctx  context.Context
	auto bool // open sessions once the tree proves large

	mu       sync.Mutex
	cond     *sync.Cond
	clients  []*framework.Client // the sessions the workers read over
	perCl    []int               // workers on each of clients
	most     int                 // the most sessions read over at once
	extra    []*framework.Client // sessions opened for the load, closed after it
	tokens   int                 // autoLoadBudget tokens held for extra
	queue    []string
	head     int
	found    int // paths queued so far
	active   int // paths being read
	workers  int
	err      error
	done     bool
	opening  bool
	cancelOp context.CancelFunc
	opened   sync.WaitGroup
}

// add makes cl one of the sessions the load reads over; l.mu held, or
// before the workers start.
func (l *loader) add(cl *framework.Client) {
	l.clients = append(l.clients, cl)
	l.perCl = append(l.perCl, 0)
	l.most = max(l.most, len(l.clients))
}

// grow starts workers up to the bound and the work queued, each on the
// session with the fewest, and the automatic sessions' opening once the
// tree proves large; l.mu held.
func (l *loader) grow() {
	if l.auto && !l.opening && l.err == nil && l.found >= autoLoadNodes {
		l.opening = true
		ctx, cancel := context.WithCancel(l.ctx)
		l.cancelOp = cancel
		l.opened.Add(1)
		go l.openMore(ctx)
	}
	for l.workers < l.c.o.readsInFlight*len(l.clients) && l.workers-l.active < len(l.queue)-l.head {
		i := 0
		for j, n := range l.perCl {
			if n < l.perCl[i] {
				i = j
			}
		}
		l.perCl[i]++
		l.workers++
		go l.work(i, l.clients[i])
	}
}

// openMore opens the automatic sessions the budget allows and adds them
// to a load still running.
func (l *loader) openMore(ctx context.Context) {
	defer l.opened.Done()
	n := 0
	for n < autoLoadExtra && tryAcquire(autoLoadBudget) {
		n++
	}
	if n == 0 {
		l.c.log.Debug("large tree: no load session left in the process's budget, loading over one")
		return
	}
	more := l.c.openLoadSessions(ctx, n)
	for range n - len(more) {
		<-autoLoadBudget
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tokens += len(more)
	l.extra = append(l.extra, more...)
	if l.done || len(more) == 0 {
		return
	}
	for _, s := range more {
		l.add(s)
	}
	l.c.log.Info("large tree: loading over more sessions, closed after the load",
		zap.Int("sessions", len(l.clients)), zap.Int("found", l.found))
	l.grow()
	l.cond.Broadcast()
}

// finish stops an opening still under way and closes the sessions opened
// for the load, giving their budget back.
func (l *loader) finish() {
	if l.cancelOp != nil {
		l.cancelOp()
	}
	l.opened.Wait()
	for _, s := range l.extra {
		_ = s.Close()
	}
	for range l.tokens {
		<-autoLoadBudget
	}
}

func tryAcquire(sem chan struct{}) bool {
	select {
	case sem <- struct{}{}:
		return true
	default:
		return false
	}
}

// work reads paths over cl, the load's session i, until none is left.
func (l *loader) work(i int, cl *framework.Client) {
	l.mu.Lock()
	defer l.mu.Unlock()
	defer l.cond.Broadcast()
	for {
		for l.head == len(l.queue) && l.active > 0 && l.err == nil {
			l.cond.Wait()
		}
		if l.err != nil || l.head == len(l.queue) {
			l.workers--
			l.perCl[i]--
			return
		}
		p := l.queue[l.head]
		l.queue[l.head] = ""
		l.head++
		if l.head == len(l.queue) {
			l.queue, l.head = l.queue[:0], 0
		}
		l.active++
		l.mu.Unlock()
		kids, err := l.c.visit(l.ctx, cl, p, nil)
		l.mu.Lock()
		l.active--
		if err != nil && l.err == nil {
			l.err = err
		}
		l.queue = append(l.queue, kids...)
		l.found += len(kids)
		l.grow()
		l.cond.Broadcast()
	}
}

// openLoadSessions opens n sessions for a load besides the client's, each
// synced with the server (so that it reads no older state than the
// cache's watch was set on), in parallel. A session that cannot be
// opened is left out.
func (c *Cache) openLoadSessions(ctx context.Context, n int) []*framework.Client {
	more := make([]*framework.Client, n)
	var g errgroup.Group
	for i := range more {
		g.Go(func() error {
			s, err := c.c.NewSession(ctx)
			if err == nil {
				if err = s.Sync(ctx, c.path); err != nil {
					_ = s.Close()
				}
			}
			if err != nil {
				if ctx.Err() == nil {
					c.log.Warn("load session not opened: loading over fewer", zap.Error(err))
				}
				return nil
			}
			more[i] = s
			return nil
		})
	}
	_ = g.Wait()
	return slices.DeleteFunc(more, func(s *framework.Client) bool { return s == nil })
}

// visit reads p over cl (unless first is its read), applies it, and
// returns the paths of its children to visit next.
func (c *Cache) visit(ctx context.Context, cl *framework.Client, p string, first *read) ([]string, error) {
	var r read
	if first != nil {
		r = *first
	} else {
		var err error
		r, err = c.readNode(ctx, cl, p)
		if errors.Is(err, zk.ErrNoAuth) {
			return nil, c.unreadableOrFail(p, err)
		}
		if err != nil {
			return nil, err
		}
	}
	if !c.apply(p, r) || r.stat == nil {
		return nil, nil
	}
	if c.o.maxDepth >= 0 && c.depth(p) >= c.o.maxDepth {
		return nil, nil
	}
	var names []string
	if r.stat.NumChildren > 0 {
		var err error
		names, _, err = cl.Children(ctx, p)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			c.apply(p, read{})
			return nil, nil
		case errors.Is(err, zk.ErrNoAuth):
			return nil, c.unreadableOrFail(p, err)
		case err != nil:
			return nil, err
		}
	}
	kids := make([]string, 0, len(names))
	for _, n := range names {
		k := framework.JoinPath(p, n)
		if c.o.filter != nil && !c.o.filter(k) {
			continue
		}
		kids = append(kids, k)
	}
	c.mu.Lock()
	c.dropOthersLocked(p, kids)
	c.mu.Unlock()
	return kids, nil
}

// dropOthersLocked removes the cached children of p whose paths are not
// in kids (p's children as just listed); c.mu is held.
func (c *Cache) dropOthersLocked(p string, kids []string) {
	id := c.nodes.find(p)
	if id == none || c.nodes.at(id).first == none {
		return
	}
	keep := make(map[string]struct{}, len(kids))
	for _, k := range kids {
		keep[k] = struct{}{}
	}
	var gone []string
	c.nodes.children(id, func(k int32) bool {
		q := framework.JoinPath(p, c.nodes.name(k))
		if _, ok := keep[q]; !ok {
			gone = append(gone, q)
		}
		return true
	})
	for _, q := range gone {
		c.removeLocked(q)
	}
}

// knownLocked reports whether r is a read of the incarnation of p that
// is cached; c.mu is held.
func (c *Cache) knownLocked(p string, r read) bool {
	id := c.nodes.find(p)
	return id != none && r.stat != nil && r.stat.Czxid == c.nodes.at(id).czxid
}

// apply puts a read of p into the cache, with its event, and reports
// whether p is cached after it. Reads older than what is cached (a lower
// czxid, or the same czxid and a lower mzxid) are ignored: the cache
// only moves forward. Changes are told by czxid and mzxid, never by
// version, so a node deleted and made again with the same version is seen
// (CURATOR-391).
func (c *Cache) apply(p string, r read) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == closed {
		return false
	}
	s := c.nodes
	id := s.find(p)
	if r.stat == nil {
		if id != none {
			c.removeLocked(p)
		}
		return false
	}
	if id != none {
		n := s.at(id)
		switch {
		case r.stat.Czxid < n.czxid:
			return true
		case r.stat.Czxid > n.czxid:
			// Another incarnation: the old one and its subtree are gone.
			c.removeLocked(p)
		case r.stat.Mzxid < n.mzxid:
			return true
		case r.stat.Mzxid > n.mzxid:
			old := c.nodeLocked(p, id)
			s.setData(id, r.data)
			s.setStat(id, r.stat)
			c.emitLocked(Event{Type: Changed, Path: p, Node: c.nodeLocked(p, id), Old: old, Err: r.err})
			return true
		default:
			if r.stat.Pzxid >= n.pzxid {
				s.setStat(id, r.stat)
			}
			return true
		}
	}
	if p == c.path {
		id = s.add(none, "", r.data, r.stat)
	} else {
		parent, name := framework.SplitPath(p)
		pid := s.find(parent)
		if pid == none {
			return false
		}
		id = s.add(pid, name, r.data, r.stat)
	}
	c.emitLocked(Event{Type: Created, Path: p, Node: c.nodeLocked(p, id), Err: r.err})
	return true
}

// removeLocked removes p and its cached subtree, deepest first, each with
// a Deleted event; c.mu is held.
func (c *Cache) removeLocked(p string) {
	if id := c.nodes.find(p); id != none {
		c.removeTreeLocked(p, id)
		c.nodes.compact()
	}
}

func (c *Cache) removeTreeLocked(p string, id int32) {
	s := c.nodes
	for k := s.at(id).first; k != none; k = s.at(id).first {
		c.removeTreeLocked(framework.JoinPath(p, s.name(k)), k)
	}
	n := c.nodeLocked(p, id)
	s.remove(id)
	c.emitLocked(Event{Type: Deleted, Path: p, Node: n})
}

// unreadableOrFail is unreadable, except for the root while Start
// loads: a cache of a root it may not read fails to start (zk.ErrNoAuth),
// whichever watches serve it, rather than starting empty.
func (c *Cache) unreadableOrFail(p string, err error) error {
	if p == c.path {
		c.mu.RLock()
		starting := c.state == starting
		c.mu.RUnlock()
		if starting {
			return err
		}
	}
	c.unreadable(p, err)
	return nil
}

// unreadable reports a node the client may not read, and drops it from
// the cache.
func (c *Cache) unreadable(p string, err error) {
	c.log.Warn("node not readable", zap.String("node", p), zap.Error(err))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == closed {
		return
	}
	c.removeLocked(p)
	c.emitLocked(Event{Type: Unreadable, Path: p, Err: fmt.Errorf("cache: read %s: %w", p, err)})
}
