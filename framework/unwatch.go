package framework

import (
	"context"
	"fmt"

	"github.com/gocurator/curator/internal/zkwire"
)

// WatchKind names the one-shot watch of GetW (DataWatch), ExistsW
// (ExistWatch) or ChildrenW (ChildWatch), for Unwatch.
type WatchKind int

const (
	DataWatch WatchKind = iota + 1
	ExistWatch
	ChildWatch
)

// Unwatch gives back one one-shot watch of kind on path that the caller
// set and will not wait for any more (the watch of a timed-out acquire on
// its predecessor, say), and returns once the server has dropped it, if
// nothing else needs it. A one-shot watch stays on the server until it
// fires, or the session ends; Unwatch removes it (RemoveWatches) as soon
// as no other watch of the client needs the same server watch (ZooKeeper
// keeps one data watch per path and session for GetW and ExistsW, and one
// children watch for ChildrenW, whoever asked), and keeps it out of the
// watches set again after a reconnection. The channel of the watch given
// back may still get an event. Unwatch of a watch that has fired, or was
// never set, does nothing. On a path with a persistent watch (Watch), the
// one-shot watches are served from it; Unwatch gives one back, and the
// persistent watch goes when its last user does.
//
// A watch set on the same path by another goroutine while Unwatch runs
// is set again at once (a SetWatches from the zxid of the removal, so a
// change in between fires it): it never goes silent.
func (c *Client) Unwatch(ctx context.Context, path string, kind WatchKind) error {
	if c == nil {
		return ErrNilClient
	}
	if ctx == nil {
		return invalid("nil context")
	}
	if err := ValidatePath(path); err != nil {
		return err
	}
	var k, table watchKind
	switch kind {
	case DataWatch:
		k, table = watchData, watchData
	case ExistWatch:
		k, table = watchExist, watchData
	case ChildWatch:
		k, table = watchChild, watchChild
	default:
		return invalid("watch kind %d", kind)
	}
	if c.isClosed() {
		return ErrClosed
	}
	full := c.full(path)
	// ExistsW on a node that exists sets a data watch, and is counted so.
	if !c.set.take(full, k) && (kind != ExistWatch || !c.set.take(full, watchData)) {
		// Fired already, or served by the path's persistent watch,
		// which then loses a user.
		c.pw.giveBackOneShot(full, k)
		return nil
	}
	if c.set.neededOn(full, table) {
		return nil
	}
	wc := c.liveWire()
	p := c.pw
	p.mu.Lock()
	if p.entries[full] != nil {
		p.mu.Unlock()
		return nil
	}
	p.gone[watchKey{full, table}] = true
	if wc == nil {
		p.mu.Unlock()
		return nil // no connection: the server has no watch of ours; none is set again
	}
	typ := int32(zkwire.WatcherData)
	if table == watchChild {
		typ = zkwire.WatcherChildren
	}
	var removedAt int64
	reply, err := p.sendLocked(wc, zkwire.OpRemoveWatches, zkwire.RemoveWatchesBody(full, typ), func(_ int32, zxid int64) { removedAt = zxid })
	p.mu.Unlock()
	if err != nil {
		return nil // the connection failed: its watches went with it
	}
	select {
	case code, ok := <-reply:
		if !ok {
			return nil
		}
		if code != zkwire.ErrOK && code != zkwire.ErrNoWatcher {
			return fmt.Errorf("unwatch %s: server error code %d", path, code)
		}
	case <-ctx.Done():
		return ctx.Err()
	}
	// A watch of the same table set meanwhile (its request may have gone
	// before the removal): set it again from the removal's zxid.
	p.mu.Lock()
	defer p.mu.Unlock()
	if !c.set.neededOn(full, table) {
		return nil
	}
	delete(p.gone, watchKey{full, table})
	req := zkwire.SetWatches{RelativeZxid: removedAt, Data: []string{}, Exist: []string{}, Child: []string{}}
	switch {
	case table == watchChild:
		req.Child = []string{full}
	case c.set.count(full, watchData) > 0:
		req.Data = []string{full}
	default:
		req.Exist = []string{full}
	}
	_, _ = p.sendLocked(wc, zkwire.OpSetWatches, req.Append(nil, false), nil)
	return nil
}

// neededOn reports whether a one-shot watch counted on path uses the
// server table (watchData: data and exist watches; watchChild).
func (w *watchCounts) neededOn(path string, table watchKind) bool {
	if table == watchChild {
		return w.count(path, watchChild) > 0
	}
	return w.count(path, watchData) > 0 || w.count(path, watchExist) > 0
}

// givenBackLocked reports whether the one-shot watches of path in table
// were given back (Unwatch) and nothing of the client wants them again.
func (p *persistentWatches) givenBackLocked(path string, table watchKind) bool {
	return p.gone[watchKey{path, table}] && !p.c.set.neededOn(path, table)
}
