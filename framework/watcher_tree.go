package framework

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"sync"

	"github.com/go-zookeeper/zk"
)

// The recursive Watcher's fallback, on servers without persistent watches:
// what Curator's TreeCache does, with one-shot watches. Every node of the
// subtree has an exists watch and, while it exists, a children watch; a
// node that appears in its parent's listing is loaded (and reported
// created, with its subtree), one that leaves it is reported deleted (with
// its subtree), and each read that sets a watch again is compared with
// the last (czxid, mzxid) to report what the watch's gap hid. The root has
// an exists watch (it may be created); the nodes below it a data watch
// (GetW: none is left on a node that is gone). It costs two server watches
// per node where the persistent watch costs one per tree.
//
// exists needs no permission, getData and getChildren need READ. A node
// the client may not read is watched by an exists watch alone, and its
// children are not (they cannot be listed): it is reported like any
// other node (created, data changed, deleted: what the exists watch and
// the stat show), and listed again after each of its events in case its
// permission changed. Waiting for the permission instead, as for a
// connection, would wait for ever and leave the whole tree unwatched.
// Only Watch's own first load (strict) fails, with zk.ErrNoAuth, when the
// root itself cannot be listed.

// treeWatch is one pending one-shot watch of the fallback.
type treeWatch struct {
	path string
	kind WatchKind
}

type treeFallback struct {
	w     *Watcher
	ctx   context.Context
	nodes map[string]*treeNode // caller's paths of the nodes known to exist
	// cases[0] is the state change, cases[1] the end; chanCases[i] the
	// channel of watches[i].
	cases     []reflect.SelectCase
	chanCases []reflect.SelectCase
	watches   []treeWatch
	lost      bool // a watch reported the session's end: load again
	strict    bool // Watch's first load: an unreadable root fails it
	// before is the tree as last reported, kept while it is loaded
	// again (lost) until a load succeeds: what changed meanwhile is
	// reported from it.
	before map[string]*treeNode
}

type treeNode struct {
	stat     *zk.Stat
	children map[string]bool
	// unreadable: the children watch was refused (no READ); the node is
	// watched by its exists watch alone.
	unreadable bool
}

// runTreeFallback runs the recursive fallback until the Watcher ends.
func (w *Watcher) runTreeFallback(armed chan struct{}, strict bool) {
	defer w.wg.Done()
	arm := sync.OnceFunc(func() { close(armed) })
	defer arm()
	ctx, end, cancel := w.fallbackContext()
	defer cancel()
	t := &treeFallback{w: w, ctx: ctx, nodes: map[string]*treeNode{}, strict: strict}
	defer t.giveBack()
	defer w.resyncOnReconnect()()
	loaded := false
	for !ended(end) {
		changed := w.c.StateChanged()
		if !loaded || t.lost {
			// Watches of a load that failed, or of an ended session,
			// are given back before the tree is read again.
			if loaded && t.before == nil {
				t.before = t.nodes
			}
			t.giveBack()
			t.reset()
			if err := t.load(w.path, false); err != nil {
				t.giveBack()
				t.reset()
				if t.strict && errors.Is(err, zk.ErrNoAuth) {
					w.failArming(err)
					return
				}
				if !w.pause(end, changed) {
					return
				}
				continue
			}
			if t.before != nil {
				// The resync marker of a reconnection is queued as the
				// state changes, maybe before this load: a consumer that
				// read again at the marker may have missed what changed
				// until the watches were set again. Reported here.
				t.reportSince(t.before)
				t.before = nil
			}
			loaded = true
		}
		arm()
		t.strict = false
		t.cases = append(t.cases[:0:0], reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(changed)},
			reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(end)})
		i, v, ok := reflect.Select(t.allCases())
		switch i {
		case 0:
			// A state change: a failed read is tried again (the
			// resync marker comes from resyncOnReconnect).
		case 1:
			return
		default:
			k := i - 2
			tw := t.watches[k]
			t.dropWatch(k)
			if ok {
				if ev := v.Interface().(zk.Event); ev.Type == zk.EventNotWatching {
					t.lost = true
					continue
				}
			}
			if err := t.fired(tw); err != nil && !errors.Is(err, context.Canceled) {
				// Read again from scratch once connected.
				t.lost = true
				if !w.pause(end, changed) {
					return
				}
			}
		}
	}
}

func (t *treeFallback) allCases() []reflect.SelectCase { return append(t.cases, t.chanCases...) }

// reset forgets every node and watch (the watches still set are left to
// fire unheard; their session may be gone).
func (t *treeFallback) reset() {
	t.nodes = map[string]*treeNode{}
	t.watches = nil
	t.chanCases = nil
	t.lost = false
}

func (t *treeFallback) addWatch(path string, kind WatchKind, ch <-chan zk.Event) {
	t.watches = append(t.watches, treeWatch{path: path, kind: kind})
	t.chanCases = append(t.chanCases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ch)})
}

func (t *treeFallback) dropWatch(k int) {
	last := len(t.watches) - 1
	t.watches[k], t.chanCases[k] = t.watches[last], t.chanCases[last]
	t.watches, t.chanCases = t.watches[:last], t.chanCases[:last]
}

// load reads path and its subtree, setting their watches; report: each
// node found is reported created.
func (t *treeFallback) load(path string, report bool) error {
	stat, err := t.watchNode(path)
	if err != nil || stat == nil {
		return err
	}
	return t.loadKnown(path, stat, report)
}

// loadKnown is load for a node whose own watch is set and that exists;
// stat is what that watch's read found.
func (t *treeFallback) loadKnown(path string, stat *zk.Stat, report bool) error {
	kids, st, cch, err := t.w.c.ChildrenW(t.ctx, path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil // its deletion is on its way on the node's watch
	}
	unreadable := errors.Is(err, zk.ErrNoAuth)
	switch {
	case unreadable && t.strict && path == t.w.path:
		return err
	case unreadable:
		st, kids = stat, nil
	case err != nil:
		return err
	default:
		t.addWatch(path, ChildWatch, cch)
	}
	n := &treeNode{stat: st, children: map[string]bool{}, unreadable: unreadable}
	t.nodes[path] = n
	if report {
		t.w.queue(WatchEvent{Type: WatchCreated, Path: path, Zxid: st.Czxid})
	}
	sort.Strings(kids)
	for _, k := range kids {
		n.children[k] = true
		if err := t.load(JoinPath(path, k), report); err != nil {
			return err
		}
	}
	return nil
}

// watchNode reads path with a watch: the root's an exists watch, set
// whether it exists or not; a node below it a data watch, none if it is
// gone (stat nil).
func (t *treeFallback) watchNode(path string) (*zk.Stat, error) {
	if path == t.w.path {
		stat, ch, err := t.w.c.ExistsW(t.ctx, path)
		if err != nil {
			return nil, err
		}
		t.addWatch(path, ExistWatch, ch)
		return stat, nil
	}
	_, stat, ch, err := t.w.c.GetW(t.ctx, path)
	if errors.Is(err, zk.ErrNoAuth) {
		// Not readable: its exists watch needs no permission. Should the
		// node be gone meanwhile, that watch waits for a creation; it is
		// tracked, fires unheard (fired ignores a node not known) or is
		// given back at the end.
		stat, ch, err = t.w.c.ExistsW(t.ctx, path)
		if err != nil {
			return nil, err
		}
		t.addWatch(path, ExistWatch, ch)
		return stat, nil
	}
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	t.addWatch(path, DataWatch, ch)
	return stat, nil
}

// fired handles a watch's event: read the node again and report the
// difference.
func (t *treeFallback) fired(tw treeWatch) error {
	n := t.nodes[tw.path]
	if tw.kind == ChildWatch {
		if n == nil {
			return nil // deleted meanwhile
		}
		return t.relist(tw.path, n)
	}
	if tw.path != t.w.path && n == nil {
		return nil // a node already reported deleted: not watched again
	}
	stat, err := t.watchNode(tw.path)
	if err != nil {
		return err
	}
	switch {
	case stat == nil && n != nil:
		t.deleted(tw.path)
		if parent := t.nodes[parentOf(tw.path)]; parent != nil && tw.path != t.w.path {
			_, name := SplitPath(tw.path)
			delete(parent.children, name)
		}
	case stat != nil && n == nil:
		// The root, created.
		return t.loadKnown(tw.path, stat, true)
	case stat != nil && stat.Czxid != n.stat.Czxid:
		t.deleted(tw.path)
		return t.loadKnown(tw.path, stat, true)
	case stat != nil:
		t.data(tw.path, n, stat)
		if n.unreadable {
			// Its permission may have changed: list it again.
			return t.relist(tw.path, n)
		}
	}
	return nil
}

// relist lists a known node's children again, setting its children watch,
// and reports the children gone (with their subtrees) and new (with
// theirs). A node the client may no longer read keeps its exists watch
// alone (see unreadable).
func (t *treeFallback) relist(path string, n *treeNode) error {
	kids, st, ch, err := t.w.c.ChildrenW(t.ctx, path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil // the node's watch reports it
	}
	if errors.Is(err, zk.ErrNoAuth) {
		n.unreadable = true
		return nil
	}
	if err != nil {
		return err
	}
	n.unreadable = false
	t.addWatch(path, ChildWatch, ch)
	t.data(path, n, st)
	now := map[string]bool{}
	for _, k := range kids {
		now[k] = true
	}
	old := make([]string, 0, len(n.children))
	for k := range n.children {
		old = append(old, k)
	}
	sort.Strings(old)
	for _, k := range old {
		if !now[k] {
			delete(n.children, k)
			t.deleted(JoinPath(path, k))
		}
	}
	sort.Strings(kids)
	for _, k := range kids {
		if !n.children[k] {
			n.children[k] = true
			if err := t.load(JoinPath(path, k), true); err != nil {
				return err
			}
		}
	}
	return nil
}

// data reports a data change seen in stat.
func (t *treeFallback) data(path string, n *treeNode, stat *zk.Stat) {
	if stat.Mzxid != n.stat.Mzxid {
		t.w.queue(WatchEvent{Type: WatchDataChanged, Path: path, Zxid: stat.Mzxid})
	}
	n.stat = stat
}

// deleted reports path and its known subtree deleted, deepest first, and
// forgets them.
func (t *treeFallback) deleted(path string) {
	n := t.nodes[path]
	if n == nil {
		return
	}
	kids := make([]string, 0, len(n.children))
	for k := range n.children {
		kids = append(kids, k)
	}
	sort.Strings(kids)
	for _, k := range kids {
		t.deleted(JoinPath(path, k))
	}
	delete(t.nodes, path)
	t.w.queue(WatchEvent{Type: WatchDeleted, Path: path})
}

// reportSince reports how the tree just loaded differs from before, the
// tree as last reported: deletions deepest first, then creations parents
// first, then data changes.
func (t *treeFallback) reportSince(before map[string]*treeNode) {
	gone := make([]string, 0)
	for p, n := range before {
		if m := t.nodes[p]; m == nil || m.stat.Czxid != n.stat.Czxid {
			gone = append(gone, p)
		}
	}
	// In reverse order a node's descendants come before it.
	sort.Sort(sort.Reverse(sort.StringSlice(gone)))
	for _, p := range gone {
		t.w.queue(WatchEvent{Type: WatchDeleted, Path: p})
	}
	now := make([]string, 0, len(t.nodes))
	for p := range t.nodes {
		now = append(now, p)
	}
	sort.Strings(now)
	for _, p := range now {
		m, n := t.nodes[p], before[p]
		switch {
		case n == nil || n.stat.Czxid != m.stat.Czxid:
			t.w.queue(WatchEvent{Type: WatchCreated, Path: p, Zxid: m.stat.Czxid})
		case n.stat.Mzxid != m.stat.Mzxid:
			t.w.queue(WatchEvent{Type: WatchDataChanged, Path: p, Zxid: m.stat.Mzxid})
		}
	}
}

// giveBack removes the watches still set when the Watcher ends.
func (t *treeFallback) giveBack() {
	if t.w.c.isClosed() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), unwatchTimeout)
	defer cancel()
	for _, tw := range t.watches {
		_ = t.w.c.Unwatch(ctx, tw.path, tw.kind)
	}
}
