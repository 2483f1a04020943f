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
}

type treeNode struct {
	stat     *zk.Stat
	children map[string]bool
}

// runTreeFallback runs the recursive fallback until the Watcher ends.
func (w *Watcher) runTreeFallback(armed chan struct{}) {
	defer w.wg.Done()
	arm := sync.OnceFunc(func() { close(armed) })
	defer arm()
	ctx, end, cancel := w.fallbackContext()
	defer cancel()
	t := &treeFallback{w: w, ctx: ctx, nodes: map[string]*treeNode{}}
	defer t.giveBack()
	defer w.resyncOnReconnect()()
	loaded := false
	for !ended(end) {
		changed := w.c.StateChanged()
		if !loaded || t.lost {
			// Watches of a load that failed, or of an ended session,
			// are given back before the tree is read again.
			t.giveBack()
			t.reset()
			if err := t.load(w.path, false); err != nil {
				t.giveBack()
				t.reset()
				if !w.pause(end, changed) {
					return
				}
				continue
			}
			loaded = true
		}
		arm()
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
	return t.loadKnown(path, report)
}

// loadKnown is load for a node whose own watch is set and that exists.
func (t *treeFallback) loadKnown(path string, report bool) error {
	kids, st, cch, err := t.w.c.ChildrenW(t.ctx, path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil // its deletion is on its way on the node's watch
	}
	if err != nil {
		return err
	}
	t.addWatch(path, ChildWatch, cch)
	n := &treeNode{stat: st, children: map[string]bool{}}
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
		kids, st, ch, err := t.w.c.ChildrenW(t.ctx, tw.path)
		if errors.Is(err, zk.ErrNoNode) {
			return nil // the node's watch reports it
		}
		if err != nil {
			return err
		}
		t.addWatch(tw.path, ChildWatch, ch)
		t.data(tw.path, n, st)
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
				t.deleted(JoinPath(tw.path, k))
			}
		}
		sort.Strings(kids)
		for _, k := range kids {
			if !n.children[k] {
				n.children[k] = true
				if err := t.load(JoinPath(tw.path, k), true); err != nil {
					return err
				}
			}
		}
		return nil
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
		return t.loadKnown(tw.path, true)
	case stat != nil && stat.Czxid != n.stat.Czxid:
		t.deleted(tw.path)
		return t.loadKnown(tw.path, true)
	case stat != nil:
		t.data(tw.path, n, stat)
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
