package oneshot

import (
	"context"
	"errors"

	"github.com/go-zookeeper/zk"
)

// RunNode watches w.Path alone with one-shot watches, set again after
// each event: an exists watch (creation, deletion, data) and, while the
// node exists, a children watch. It reports what each read shows changed
// since the last, and runs until stop closes or parent ends (the
// client's context: its requests run under it), then removes the watches
// still set.
//
// On a node the client may not read only the exists watch can be set.
// Waiting for a state change before trying the children watch again would
// wait for ever (no reconnection grants the permission), and the exists
// watch would never be set again either; so the node is watched by its
// exists watch alone (its Pzxid still shows children changes at its next
// event), and the children watch is tried again after each event.
func (w Watch) RunNode(parent context.Context, stop <-chan struct{}) {
	arm := w.armed()
	ctx, end, cancel := runContext(parent, stop)
	defer cancel()
	n := &node{w: w}
	defer n.giveBack()
	strict := w.Strict
	for !ended(end) {
		changed := w.Client.StateChanged()
		refused, err := n.set(ctx, strict)
		if refused != nil {
			w.refused(refused)
			return
		}
		if err != nil {
			if !pause(end, changed) {
				return
			}
			continue
		}
		arm()
		strict = false
		select {
		case <-n.existsCh:
			n.existsCh = nil
			n.unreadable = false // its permission may have changed: try again
		case <-n.childCh:
			n.childCh = nil
		case <-changed:
		case <-end:
			return
		}
	}
}

// node is one run of RunNode: the one-shot watches it holds on the node
// and what it last read of it.
type node struct {
	w                 Watch
	existsCh, childCh <-chan zk.Event
	last              *zk.Stat // nil: the node is missing
	known             bool     // last is a read's, not a guess
	unreadable        bool     // the children watch was refused
}

// see takes in a read of the node, reporting what changed since the last.
func (n *node) see(st *zk.Stat) {
	if n.known {
		n.diff(n.last, st)
	}
	n.last, n.known = st, true
}

// set sets the one-shot watches that are not set, reading the node as it
// does. refused is a strict run's refused children watch, which ends the
// run; err is a failure to try again after a pause.
func (n *node) set(ctx context.Context, strict bool) (refused, err error) {
	c, path := n.w.Client, n.w.Path
	if n.existsCh == nil {
		stat, ch, err := c.ExistsW(ctx, path)
		if err != nil {
			return nil, err
		}
		n.existsCh = ch
		n.see(stat)
	}
	if n.last == nil || n.childCh != nil || n.unreadable {
		return nil, nil
	}
	_, stat, ch, err := c.ChildrenW(ctx, path)
	switch {
	case err == nil:
		n.childCh = ch
		n.see(stat)
	case errors.Is(err, zk.ErrNoNode):
		n.see(nil)
	case errors.Is(err, zk.ErrNoAuth) && strict:
		return err, nil
	case errors.Is(err, zk.ErrNoAuth):
		n.unreadable = true
		// The children watch that fired (if one did) is not set again;
		// the node's stat still shows the change.
		if stat, err := c.Exists(ctx, path); err == nil {
			n.see(stat)
		}
	default:
		return nil, err
	}
	return nil, nil
}

// giveBack removes the one-shot watches still set: they stay on the
// server until they fire, and an exists watch on a missing node could
// wait for ever.
func (n *node) giveBack() {
	giveBack(n.w.Client, func(yield func(string, Kind) bool) {
		if n.existsCh != nil && !yield(n.w.Path, ExistWatch) {
			return
		}
		if n.childCh != nil {
			yield(n.w.Path, ChildWatch)
		}
	})
}

// diff reports what changed between two reads of the node.
func (n *node) diff(old, cur *zk.Stat) {
	emit, path := n.w.Emit, n.w.Path
	switch {
	case old == nil && cur == nil:
	case old == nil:
		emit(Event{Type: Created, Path: path, Zxid: cur.Czxid})
	case cur == nil:
		emit(Event{Type: Deleted, Path: path})
	case cur.Czxid != old.Czxid:
		emit(Event{Type: Deleted, Path: path})
		emit(Event{Type: Created, Path: path, Zxid: cur.Czxid})
	default:
		if cur.Mzxid != old.Mzxid {
			emit(Event{Type: DataChanged, Path: path, Zxid: cur.Mzxid})
		}
		if cur.Pzxid != old.Pzxid {
			emit(Event{Type: ChildrenChanged, Path: path, Zxid: cur.Pzxid})
		}
	}
}
