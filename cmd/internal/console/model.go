package console

import (
	"context"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/cache"
)

// Bounds of the model's memory.
const (
	maxTerms      = 50   // terms kept per lock or election
	maxTermPaths  = 1000 // locks and elections whose terms are kept
	queueSamples  = 4    // depths kept per queue, for WarnGrowing
	sessionsEvery = 3 * time.Second
	consTimeout   = 2 * time.Second
)

// entry is one recipe found: its layout and its node with two levels
// below it, as the classifier read them.
type entry struct {
	layout inspect.Layout
	z      *inspect.Znode
}

// model is the console's view of the tree: the recipes found in the
// cache, kept up to date by one worker from the cache's events.
type model struct {
	root    string
	cache   *cache.Cache
	servers []string

	// dirty are the directories to classify again; full asks for the
	// whole tree (after the load and every resync). Guarded by dmu.
	dmu   sync.Mutex
	dirty map[string]struct{}
	full  bool
	kick  chan struct{} // buffered: dirty or full has something
	skick chan struct{} // buffered: ask the servers for cons now

	mu       sync.RWMutex
	recipes  map[string]entry
	empties  map[string]inspect.Orphan // lock directories left empty
	terms    map[string][]Term
	depths   map[string][]int
	sessions *inspect.Sessions
	connFP   string // fingerprint of the participants' connection states
	state    connstate.State
	since    time.Time // of state
	loaded   bool
	nodes    int
	version  uint64
	changed  chan struct{} // closed at the next publish
	snap     *snapshot     // of version, built on demand

	// rescans counts the classifications of the whole tree (tests: a
	// change must not cause one).
	rescans atomic.Int64
}

func newModel(root string, cc *cache.Cache, servers []string) *model {
	return &model{
		root: root, cache: cc, servers: servers,
		dirty: map[string]struct{}{}, kick: make(chan struct{}, 1), skick: make(chan struct{}, 1),
		recipes: map[string]entry{}, empties: map[string]inspect.Orphan{}, terms: map[string][]Term{},
		depths: map[string][]int{}, state: connstate.Connected, since: time.Now(),
		changed: make(chan struct{}),
	}
}

// onEvent is the cache's listener: it marks what an event may change and
// wakes the worker. It never blocks.
func (m *model) onEvent(ev cache.Event) {
	m.dmu.Lock()
	switch ev.Type {
	case cache.Initialized, cache.Resynced:
		m.full = true
	case cache.Created, cache.Deleted, cache.Changed:
		// A node can change the recipe at itself and at its parent; at
		// its grandparent only where the classifier reads two levels
		// down: a V2 semaphore (its leases/ and locks/) and a discovery
		// base path (its services' instances). Marking every
		// grandparent would read a directory of 10,000 locks again at
		// each lock's change.
		p := ev.Path
		for i := 0; i < 3 && m.within(p); i++ {
			if i == 2 && !m.readsGrandchildren(p, ev) {
				break
			}
			m.dirty[p] = struct{}{}
			if p == "/" {
				break
			}
			p, _ = framework.SplitPath(p)
		}
	}
	m.dmu.Unlock()
	wake(m.kick)
}

// readsGrandchildren reports whether the recipe at g, the grandparent of
// ev's node, may change with it.
func (m *model) readsGrandchildren(g string, ev cache.Event) bool {
	parent, _ := framework.SplitPath(ev.Path)
	if _, name := framework.SplitPath(parent); name == "leases" || name == "locks" {
		return true
	}
	if inspect.IsServiceInstance(ev.Node.Data) || inspect.IsServiceInstance(ev.Old.Data) {
		return true
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.recipes[g].layout.Kind == inspect.KindServices
}

// onState records the client's connection state.
func (m *model) onState(s connstate.State) {
	m.mu.Lock()
	m.state, m.since = s, time.Now()
	m.publishLocked()
	m.mu.Unlock()
}

func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// within reports whether p is the root or below it.
func (m *model) within(p string) bool { return within(m.root, p) }

func within(root, p string) bool {
	if root == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == root || strings.HasPrefix(p, root+"/")
}

// run classifies what the events marked until ctx ends.
func (m *model) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.kick:
		}
		m.dmu.Lock()
		dirty, full := m.dirty, m.full
		m.dirty, m.full = map[string]struct{}{}, false
		m.dmu.Unlock()
		switch {
		case full:
			m.rescan()
		case m.isLoaded():
			m.update(dirty)
		default:
			// The initial load is under way: the cache holds part of the
			// tree, whose recipes would show wrong holders (a waiter whose
			// holder is not loaded yet). The rescan after Initialized
			// classifies everything.
		}
		wake(m.skick)
	}
}

// runSessions asks the servers which sessions are connected, every few
// seconds and after changes, for all browsers at once, until ctx ends.
func (m *model) runSessions(ctx context.Context) {
	t := time.NewTicker(sessionsEvery)
	defer t.Stop()
	for {
		s := inspect.QuerySessions(ctx, m.servers, consTimeout)
		if ctx.Err() != nil {
			return
		}
		m.mu.Lock()
		m.sessions = s
		if fp := m.fingerprintLocked(); fp != m.connFP {
			m.connFP = fp
			m.publishLocked()
		}
		m.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-m.skick:
		}
	}
}

// fingerprintLocked sums up the connection state of every participant's
// session: a change is published.
func (m *model) fingerprintLocked() string {
	var b strings.Builder
	b.WriteString(sessionsState(m.sessions))
	for _, p := range m.sortedLocked() {
		for _, c := range m.recipes[p].z.Children {
			if c.Owner != 0 {
				st, _ := m.sessions.State(c.Owner)
				b.WriteString(st[:1])
			}
		}
	}
	return b.String()
}

// rescan classifies the whole cached tree: one walk, then every
// directory.
func (m *model) rescan() {
	m.rescans.Add(1)
	nodes := map[string]*inspect.Znode{}
	var order []string
	m.cache.Walk(m.root, func(n cache.Node) bool {
		z := znodeOf(n)
		nodes[n.Path] = z
		order = append(order, n.Path)
		if n.Path != m.root {
			parent, _ := framework.SplitPath(n.Path)
			if pz := nodes[parent]; pz != nil {
				pz.Children = append(pz.Children, z)
			}
		}
		return true
	})
	recipes := map[string]entry{}
	empties := map[string]inspect.Orphan{}
	now := time.Now()
	m.mu.RLock()
	for _, p := range order {
		z := nodes[p]
		z.NumChildren = int32(len(z.Children))
		if e, ok := classify(p, z, nodes[parentOf(p)]); ok {
			recipes[p] = e
		} else if o, ok := emptyLockDir(p, z, m.recipes[p], m.empties); ok {
			empties[p] = o
		}
	}
	m.mu.RUnlock()
	m.mu.Lock()
	m.recipes, m.empties, m.loaded, m.nodes = recipes, empties, true, len(order)
	for p, e := range recipes {
		m.noteLocked(p, e, now)
	}
	for p := range m.terms {
		if _, ok := recipes[p]; !ok {
			m.endTermLocked(p, now)
		}
	}
	for p := range m.depths {
		if _, ok := recipes[p]; !ok {
			delete(m.depths, p)
		}
	}
	m.publishLocked()
	m.mu.Unlock()
}

// update classifies the directories in dirty again, from the cache.
func (m *model) update(dirty map[string]struct{}) {
	now := time.Now()
	type result struct {
		e      entry
		ok     bool
		orphan inspect.Orphan
		empty  bool
	}
	results := map[string]result{}
	m.mu.RLock()
	for p := range dirty {
		var r result
		if n, ok := m.cache.Get(p); ok {
			z := m.load(n, 2)
			var parent *inspect.Znode
			if p != "/" {
				if pn, ok := m.cache.Get(parentOf(p)); ok {
					parent = m.load(pn, 1)
				}
			}
			r.e, r.ok = classify(p, z, parent)
			if !r.ok {
				r.orphan, r.empty = emptyLockDir(p, z, m.recipes[p], m.empties)
			}
		}
		results[p] = r
	}
	m.mu.RUnlock()
	m.mu.Lock()
	for p, r := range results {
		if r.ok {
			m.recipes[p] = r.e
			m.noteLocked(p, r.e, now)
		} else {
			delete(m.recipes, p)
			delete(m.depths, p)
			m.endTermLocked(p, now)
		}
		if r.empty {
			m.empties[p] = r.orphan
		} else {
			delete(m.empties, p)
		}
	}
	m.nodes = m.cache.Len()
	m.publishLocked()
	m.mu.Unlock()
}

// load builds the node n of the cache with depth levels below it.
func (m *model) load(n cache.Node, depth int) *inspect.Znode {
	z := znodeOf(n)
	names := m.cache.Children(n.Path)
	z.NumChildren = int32(len(names))
	if depth == 0 || z.IsEphemeral() {
		return z
	}
	z.Loaded = true
	for _, name := range names {
		if c, ok := m.cache.Get(framework.JoinPath(n.Path, name)); ok {
			z.Children = append(z.Children, m.load(c, depth-1))
		}
	}
	return z
}

func znodeOf(n cache.Node) *inspect.Znode {
	_, name := framework.SplitPath(n.Path)
	return &inspect.Znode{
		Name:        name,
		Data:        n.Data,
		Czxid:       n.Stat.Czxid,
		Ctime:       time.UnixMilli(n.Stat.Ctime).UTC(),
		Owner:       n.Stat.EphemeralOwner,
		NumChildren: n.Stat.NumChildren,
		Cversion:    n.Stat.Cversion,
		Version:     n.Stat.Version,
		Loaded:      n.Stat.EphemeralOwner == 0,
	}
}

func parentOf(p string) string {
	parent, _ := framework.SplitPath(p)
	return parent
}

// classify says whether p, whose node z is loaded two levels down, is a
// recipe of its own: not a leaf, not a V2 semaphore's locks/ or leases/
// directory (parent, one level, tells), and recognised by inspect.
func classify(p string, z, parent *inspect.Znode) (entry, bool) {
	if z == nil || z.IsEphemeral() || len(z.Children) == 0 || p == "/zookeeper" || strings.HasPrefix(p, "/zookeeper/") {
		return entry{}, false
	}
	if parent != nil && (z.Name == "locks" || z.Name == "leases") && parent.Child("leases") != nil {
		return entry{}, false
	}
	l := inspect.Identify(p, z)
	if l.Kind == "" {
		return entry{}, false
	}
	return entry{layout: l, z: z}, true
}

// emptyLockDir reports a directory left empty: no data, no children, one
// that was a lock before (seen by the console) or that had children (its
// cversion, when the cache's read of it says so). The server deletes an
// empty container within a minute; a persistent one stays.
func emptyLockDir(p string, z *inspect.Znode, was entry, empties map[string]inspect.Orphan) (inspect.Orphan, bool) {
	if z == nil || z.IsEphemeral() || len(z.Children) > 0 || len(z.Data) > 0 {
		return inspect.Orphan{}, false
	}
	if o, ok := empties[p]; ok {
		return o, true
	}
	if !isLockKind(was.layout.Kind) && z.Cversion == 0 {
		return inspect.Orphan{}, false
	}
	return inspect.Orphan{Node: p, Reason: inspect.OrphanEmptyParent, Token: z.Czxid, Created: z.Ctime}, true
}

func isLockKind(kind string) bool {
	switch kind {
	case inspect.KindMutex, inspect.KindReadWrite, inspect.KindSemaphoreV1, inspect.KindSemaphoreV2, inspect.KindLatch:
		return true
	}
	return false
}

// noteLocked records a new holder (a new term) of a lock or election, and
// a queue's depth.
func (m *model) noteLocked(p string, e entry, now time.Time) {
	switch e.layout.Kind {
	case inspect.KindQueue, inspect.KindSimpleQueue:
		d := append(m.depths[p], e.layout.Size)
		if len(d) > queueSamples {
			d = d[len(d)-queueSamples:]
		}
		m.depths[p] = d
		return
	}
	if !isLockKind(e.layout.Kind) || len(e.layout.Locks) == 0 {
		return
	}
	lk := e.layout.Locks[0]
	if len(lk.Holders) == 0 {
		m.endTermLocked(p, now)
		return
	}
	h := lk.Holders[0]
	terms := m.terms[p]
	if n := len(terms); n > 0 && terms[n-1].Node == h.Node && terms[n-1].End == nil {
		return
	}
	if _, ok := m.terms[p]; !ok && len(m.terms) >= maxTermPaths {
		return
	}
	m.endTermLocked(p, now)
	terms = append(m.terms[p], Term{Node: h.Node, ID: h.Host, Session: h.Session, Client: h.Client, Token: h.Token, Start: now})
	if len(terms) > maxTerms {
		terms = terms[len(terms)-maxTerms:]
	}
	m.terms[p] = terms
}

// endTermLocked ends p's current term, if any.
func (m *model) endTermLocked(p string, now time.Time) {
	terms := m.terms[p]
	if n := len(terms); n > 0 && terms[n-1].End == nil {
		t := now
		terms[n-1].End = &t
	}
}

// publishLocked makes a new version and wakes its waiters; m.mu is held.
func (m *model) publishLocked() {
	m.version++
	m.snap = nil
	close(m.changed)
	m.changed = make(chan struct{})
}

// sortedLocked returns the recipe paths in order.
func (m *model) sortedLocked() []string {
	paths := make([]string, 0, len(m.recipes))
	for p := range m.recipes {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths
}

// watch returns the current version and a channel closed at the next.
func (m *model) watch() (uint64, <-chan struct{}) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.version, m.changed
}

func sessionsState(s *inspect.Sessions) string {
	if s == nil || !s.Complete {
		return "unknown"
	}
	return "complete"
}
