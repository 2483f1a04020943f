package oneshot

import (
	"context"
	"errors"
	"reflect"
	"sort"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/internal/zkpath"
)

// treeWatch is one pending one-shot watch of RunTree.
type treeWatch struct {
	path string
	kind Kind
}

type tree struct {
	w     Watch
	ctx   context.Context
	nodes map[string]*treeNode // caller's paths of the nodes known to exist
	// cases[0] is the state change, cases[1] the end; chanCases[i] the
	// channel of watches[i].
	cases     []reflect.SelectCase
	chanCases []reflect.SelectCase
	watches   []treeWatch
	lost      bool // a watch reported the session's end: load again
	strict    bool // the first load of a Strict run: an unreadable root fails it
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

// RunTree watches the subtree at w.Path with one-shot watches (see the
// package documentation), until stop closes or parent ends (the client's
// context: its requests run under it), then removes the watches still
// set. A read that fails is tried again from scratch at the next state
// change; what changed meanwhile is reported once the tree is loaded
// again.
func (w Watch) RunTree(parent context.Context, stop <-chan struct{}) {
	arm := w.armed()
	ctx, end, cancel := runContext(parent, stop)
	defer cancel()
	t := &tree{w: w, ctx: ctx, nodes: map[string]*treeNode{}, strict: w.Strict}
	defer t.giveBack()
	loaded := false
	for !ended(end) {
		changed := w.Client.StateChanged()
		if !loaded || t.lost {
			ok, done := t.reload(loaded, end, changed)
			if done {
				return
			}
			if !ok {
				continue
			}
			loaded = true
		}
		arm()
		t.strict = false
		if !t.wait(end, changed) {
			return
		}
	}
}

// reload reads the tree again from scratch, after giving back the
// watches of a load that failed or of an ended session, and reports what
// changed since the tree last reported. ok: it loaded; done: the run is
// to end (the end came, or a strict run's root was refused).
func (t *tree) reload(loaded bool, end, changed <-chan struct{}) (ok, done bool) {
	if loaded && t.before == nil {
		t.before = t.nodes
	}
	t.giveBack()
	t.reset()
	if err := t.load(t.w.Path, false); err != nil {
		t.giveBack()
		t.reset()
		if t.strict && errors.Is(err, zk.ErrNoAuth) {
			t.w.refused(err)
			return false, true
		}
		return false, !pause(end, changed)
	}
	if t.before != nil {
		// A consumer that read again at the resync marker (queued by the
		// caller as the state changed, maybe before this load) may have
		// missed what changed until the watches were set again: reported
		// here.
		t.reportSince(t.before)
		t.before = nil
	}
	return true, false
}

// wait waits for a watch's event, a state change or the end, and handles
// the event; false: the run is to end.
func (t *tree) wait(end, changed <-chan struct{}) bool {
	t.cases = append(t.cases[:0:0], reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(changed)},
		reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(end)})
	i, v, ok := reflect.Select(t.allCases())
	switch i {
	case 0:
		// A state change: a failed read is tried again (the caller
		// queues the resync marker).
		return true
	case 1:
		return false
	}
	k := i - 2
	tw := t.watches[k]
	t.dropWatch(k)
	if ok {
		if ev := v.Interface().(zk.Event); ev.Type == zk.EventNotWatching {
			t.lost = true
			return true
		}
	}
	if err := t.fired(tw); err != nil && !errors.Is(err, context.Canceled) {
		// Read again from scratch once connected.
		t.lost = true
		return pause(end, changed)
	}
	return true
}

func (t *tree) allCases() []reflect.SelectCase { return append(t.cases, t.chanCases...) }

// reset forgets every node and watch (the watches still set are left to
// fire unheard; their session may be gone).
func (t *tree) reset() {
	t.nodes = map[string]*treeNode{}
	t.watches = nil
	t.chanCases = nil
	t.lost = false
}

func (t *tree) addWatch(path string, kind Kind, ch <-chan zk.Event) {
	t.watches = append(t.watches, treeWatch{path: path, kind: kind})
	t.chanCases = append(t.chanCases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ch)})
}

func (t *tree) dropWatch(k int) {
	last := len(t.watches) - 1
	t.watches[k], t.chanCases[k] = t.watches[last], t.chanCases[last]
	t.watches, t.chanCases = t.watches[:last], t.chanCases[:last]
}

// load reads path and its subtree, setting their watches; report: each
// node found is reported created.
func (t *tree) load(path string, report bool) error {
	stat, err := t.watchNode(path)
	if err != nil || stat == nil {
		return err
	}
	return t.loadKnown(path, stat, report)
}

// loadKnown is load for a node whose own watch is set and that exists;
// stat is what that watch's read found.
func (t *tree) loadKnown(path string, stat *zk.Stat, report bool) error {
	kids, st, cch, err := t.w.Client.ChildrenW(t.ctx, path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil // its deletion is on its way on the node's watch
	}
	unreadable := errors.Is(err, zk.ErrNoAuth)
	switch {
	case unreadable && t.strict && path == t.w.Path:
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
		t.w.Emit(Event{Type: Created, Path: path, Zxid: st.Czxid})
	}
	sort.Strings(kids)
	for _, k := range kids {
		n.children[k] = true
		if err := t.load(zkpath.Join(path, k), report); err != nil {
			return err
		}
	}
	return nil
}

// watchNode reads path with a watch: the root's an exists watch, set
// whether it exists or not; a node below it a data watch, none if it is
// gone (stat nil).
func (t *tree) watchNode(path string) (*zk.Stat, error) {
	if path == t.w.Path {
		stat, ch, err := t.w.Client.ExistsW(t.ctx, path)
		if err != nil {
			return nil, err
		}
		t.addWatch(path, ExistWatch, ch)
		return stat, nil
	}
	_, stat, ch, err := t.w.Client.GetW(t.ctx, path)
	if errors.Is(err, zk.ErrNoAuth) {
		// Not readable: its exists watch needs no permission. Should the
		// node be gone meanwhile, that watch waits for a creation; it is
		// tracked, fires unheard (fired ignores a node not known) or is
		// given back at the end.
		stat, ch, err = t.w.Client.ExistsW(t.ctx, path)
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
func (t *tree) fired(tw treeWatch) error {
	n := t.nodes[tw.path]
	if tw.kind == ChildWatch {
		if n == nil {
			return nil // deleted meanwhile
		}
		return t.relist(tw.path, n)
	}
	if tw.path != t.w.Path && n == nil {
		return nil // a node already reported deleted: not watched again
	}
	stat, err := t.watchNode(tw.path)
	if err != nil {
		return err
	}
	switch {
	case stat == nil && n != nil:
		t.deleted(tw.path)
		if parent := t.nodes[zkpath.Parent(tw.path)]; parent != nil && tw.path != t.w.Path {
			_, name := zkpath.Split(tw.path)
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
func (t *tree) relist(path string, n *treeNode) error {
	kids, st, ch, err := t.w.Client.ChildrenW(t.ctx, path)
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
			t.deleted(zkpath.Join(path, k))
		}
	}
	sort.Strings(kids)
	for _, k := range kids {
		if !n.children[k] {
			n.children[k] = true
			if err := t.load(zkpath.Join(path, k), true); err != nil {
				return err
			}
		}
	}
	return nil
}

// data reports a data change seen in stat.
func (t *tree) data(path string, n *treeNode, stat *zk.Stat) {
	if stat.Mzxid != n.stat.Mzxid {
		t.w.Emit(Event{Type: DataChanged, Path: path, Zxid: stat.Mzxid})
	}
	n.stat = stat
}

// deleted reports path and its known subtree deleted, deepest first, and
// forgets them.
func (t *tree) deleted(path string) {
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
		t.deleted(zkpath.Join(path, k))
	}
	delete(t.nodes, path)
	t.w.Emit(Event{Type: Deleted, Path: path})
}

// reportSince reports how the tree just loaded differs from before, the
// tree as last reported: deletions deepest first, then creations parents
// first, then data changes.
func (t *tree) reportSince(before map[string]*treeNode) {
	gone := make([]string, 0)
	for p, n := range before {
		if m := t.nodes[p]; m == nil || m.stat.Czxid != n.stat.Czxid {
			gone = append(gone, p)
		}
	}
	// In reverse order a node's descendants come before it.
	sort.Sort(sort.Reverse(sort.StringSlice(gone)))
	for _, p := range gone {
		t.w.Emit(Event{Type: Deleted, Path: p})
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
			t.w.Emit(Event{Type: Created, Path: p, Zxid: m.stat.Czxid})
		case n.stat.Mzxid != m.stat.Mzxid:
			t.w.Emit(Event{Type: DataChanged, Path: p, Zxid: m.stat.Mzxid})
		}
	}
}

// giveBack removes the watches still set.
func (t *tree) giveBack() {
	giveBack(t.w.Client, func(yield func(string, Kind) bool) {
		for _, tw := range t.watches {
			if !yield(tw.path, tw.kind) {
				return
			}
		}
	})
}
