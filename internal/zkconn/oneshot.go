package zkconn

import (
	"context"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/internal/zkwire"
)

// OneShot serves a one-shot watch of kind on path from the path's
// persistent watch, if it has one: it returns the channel (go-zookeeper's
// kind: one event, then closed) and a function that takes the watch back
// (the read that set it failed), or nil if the watch must be set on the
// server as usual. The event comes as the frame does, so the order of
// events among channels is go-zookeeper's. After a reconnection the
// channel gets an event of its kind (the change may have been missed
// while disconnected: read again), and on a new session EventNotWatching,
// as go-zookeeper ends its own watches.
func (p *Registry) OneShot(path string, kind Kind) (<-chan zk.Event, func()) {
	if !p.active() {
		return nil, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.coversLocked(path) {
		return nil, nil
	}
	ch := make(chan zk.Event, 1)
	fire := func(ev zk.Event) bool {
		ch <- ev
		close(ch)
		return true
	}
	s := &Subscriber{oneShot: true, kind: kind}
	s.Event = func(t zk.EventType, ep string, zxid int64) bool {
		if ep != path {
			return false
		}
		switch kind {
		case KindData:
			if t != zk.EventNodeDataChanged && t != zk.EventNodeDeleted {
				return false
			}
		case KindExist:
			if t == zk.EventNodeChildrenChanged {
				return false
			}
		case KindChild:
			if t != zk.EventNodeChildrenChanged && t != zk.EventNodeDeleted {
				return false
			}
		}
		return fire(zk.Event{Type: t, State: zk.StateHasSession, Path: path})
	}
	s.Resync = func(newSession, _ bool) bool {
		if newSession {
			fire(zk.Event{Type: zk.EventNotWatching, State: zk.StateDisconnected, Path: path, Err: zk.ErrSessionExpired})
			return false
		}
		t := zk.EventNodeDataChanged
		if kind == KindChild {
			t = zk.EventNodeChildrenChanged
		}
		fire(zk.Event{Type: t, State: zk.StateHasSession, Path: path})
		return false
	}
	e := p.entries[path]
	e.subs[s] = struct{}{}
	return ch, func() { p.Unsubscribe(path, s) }
}

// giveBackOneShot drops one one-shot watch of kind served from path's
// persistent watch (an exists watch may stand for a data one: see
// Unwatch), and reports whether there was one.
func (p *Registry) giveBackOneShot(path string, kind Kind) bool {
	wc := p.live()
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.entries[path]
	if e == nil {
		return false
	}
	for s := range e.subs {
		if s.oneShot && s.kind == kind {
			p.dropSubLocked(e, s, wc)
			return true
		}
	}
	return false
}

// CodeError is a server's error code (KeeperException.Code) in the reply
// to a request of the client's own.
type CodeError int32

// Error says the code.
func (e CodeError) Error() string { return fmt.Sprintf("server error code %d", int32(e)) }

// Unwatch gives back one one-shot watch of kind on path (a server path),
// and returns once the server has dropped it, if nothing else needs it:
// RemoveWatches as soon as no other watch of the client needs the same
// server watch, and kept out of the watches go-zookeeper sets again
// after a reconnection. A watch served from the path's persistent watch
// is dropped from the registry. A watch of the same server table set
// meanwhile is set again from the removal's zxid. It returns ctx.Err()
// if ctx ends first, or a CodeError the server answered with.
func (p *Registry) Unwatch(ctx context.Context, path string, kind Kind) error {
	table := kind
	if kind == KindExist {
		table = KindData
	}
	// ExistsW on a node that exists sets a data watch, and is counted so.
	if !p.set.take(path, kind) && (kind != KindExist || !p.set.take(path, KindData)) {
		// Fired already, or served by the path's persistent watch,
		// which then loses a user.
		p.giveBackOneShot(path, kind)
		return nil
	}
	if p.set.neededOn(path, table) {
		return nil
	}
	wc, reply, removedAt := p.removeOneShots(path, table)
	if reply == nil {
		return nil
	}
	select {
	case code, ok := <-reply:
		if !ok {
			return nil
		}
		if code != zkwire.ErrOK && code != zkwire.ErrNoWatcher {
			return CodeError(code)
		}
	case <-ctx.Done():
		return ctx.Err()
	}
	p.setAgain(wc, path, table, *removedAt)
	return nil
}

// removeOneShots marks path's one-shot watches of table given back and
// writes their RemoveWatches on the live connection. reply is nil if
// there is nothing to wait for (a persistent watch serves the path, or
// there is no connection); removedAt holds the removal's zxid once reply
// has a code.
func (p *Registry) removeOneShots(path string, table Kind) (wc *Conn, reply <-chan int32, removedAt *int64) {
	wc = p.live()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.entries[path] != nil {
		return nil, nil, nil
	}
	p.gone[watchKey{path, table}] = true
	if wc == nil {
		return nil, nil, nil // no connection: the server has no watch of ours; none is set again
	}
	typ := int32(zkwire.WatcherData)
	if table == KindChild {
		typ = zkwire.WatcherChildren
	}
	removedAt = new(int64)
	reply, err := p.sendLocked(wc, zkwire.OpRemoveWatches, zkwire.RemoveWatchesBody(path, typ), func(_ int32, zxid int64) { *removedAt = zxid })
	if err != nil {
		return nil, nil, nil // the connection failed: its watches went with it
	}
	return wc, reply, removedAt
}

// setAgain sets again, from the removal's zxid, a watch of table on path
// set while Unwatch removed it (its request may have gone before the
// removal).
func (p *Registry) setAgain(wc *Conn, path string, table Kind, removedAt int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.set.neededOn(path, table) {
		return
	}
	delete(p.gone, watchKey{path, table})
	req := zkwire.SetWatches{RelativeZxid: removedAt, Data: []string{}, Exist: []string{}, Child: []string{}}
	switch {
	case table == KindChild:
		req.Child = []string{path}
	case p.set.count(path, KindData) > 0:
		req.Data = []string{path}
	default:
		req.Exist = []string{path}
	}
	_, _ = p.sendLocked(wc, zkwire.OpSetWatches, req.Append(nil, false), nil)
}

// Capable reports whether wc's server has persistent watches, asking it
// (srvr) first if that is not known: a server that does not answer is
// taken to have them until it refuses an AddWatch.
func (p *Registry) Capable(wc *Conn) bool {
	if wc.caps.Load() == capUnknown {
		p.probe(wc)
	}
	return wc.caps.Load() != capNo
}
