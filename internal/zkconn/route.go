package zkconn

import (
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/internal/zkwire"
)

// filterSetWatchesLocked takes the paths the registry holds a watch on
// out of go-zookeeper's setWatches request p (a whole frame), so that its
// one-shot lists never turn a persistent watch into a one-shot (the one-
// shot watches it sets again there are served by the persistent one). p
// is returned as it is if it names none, or is not understood.
func (p *Registry) filterSetWatchesLocked(frame []byte) []byte {
	if len(p.entries) == 0 && len(p.gone) == 0 || len(frame) < 12 {
		return frame
	}
	req, err := zkwire.ParseSetWatches(frame[12:], false)
	if err != nil {
		return frame
	}
	keep := func(v []string, table Kind) ([]string, bool) {
		out := v[:0:0]
		for _, path := range v {
			if p.entries[path] == nil && !p.givenBackLocked(path, table) {
				out = append(out, path)
			}
		}
		return out, len(out) != len(v)
	}
	var c1, c2, c3 bool
	req.Data, c1 = keep(req.Data, KindData)
	req.Exist, c2 = keep(req.Exist, KindData)
	req.Child, c3 = keep(req.Child, KindChild)
	if !c1 && !c2 && !c3 {
		return frame
	}
	xid := int32(uint32(frame[4])<<24 | uint32(frame[5])<<16 | uint32(frame[6])<<8 | uint32(frame[7]))
	return zkwire.Request(xid, zkwire.OpSetWatches, req.Append(nil, false))
}

// givenBackLocked reports whether the one-shot watches of path in table
// were given back (Unwatch) and nothing of the client wants them again.
func (p *Registry) givenBackLocked(path string, table Kind) bool {
	return p.gone[watchKey{path, table}] && !p.set.neededOn(path, table)
}

// notify routes a notification to the subscribers of its path and of its
// ancestors, and reports whether it is consumed: it reached a subscriber,
// and no one-shot watch of go-zookeeper's waits for it.
func (p *Registry) notify(wc *Conn, ev zkwire.WatcherEvent, zxid int64) bool {
	if zxid < 0 {
		zxid = 0 // before 3.9 a notification's header carries -1
	}
	t := zk.EventType(ev.Type)
	p.mu.Lock()
	delivered := false
	for a := ev.Path; ; {
		if e := p.entries[a]; e != nil {
			delivered = true
			p.routeLocked(wc, e, t, ev.Path, zxid)
		}
		if a == "/" || a == "" {
			break
		}
		a = parent(a)
	}
	p.mu.Unlock()
	return delivered && !p.set.wants(zk.Event{Type: t, Path: ev.Path})
}

// routeLocked hands an event of path to e's subscribers that want it.
func (p *Registry) routeLocked(wc *Conn, e *entry, t zk.EventType, path string, zxid int64) {
	self := path == e.path
	child := !self && parentOf(path) == e.path
	for s := range e.subs {
		var done bool
		switch {
		case s.Recursive:
			// ZOOKEEPER-4475: a recursive watch's children changes are
			// noise; creations and deletions say it all.
			if t != zk.EventNodeChildrenChanged {
				done = s.Event(t, path, zxid)
			}
		case e.mode == zkwire.ModePersistent:
			if self {
				done = s.Event(t, path, zxid)
			}
		case self && t != zk.EventNodeChildrenChanged:
			done = s.Event(t, path, zxid)
		case child && (t == zk.EventNodeCreated || t == zk.EventNodeDeleted):
			// Held recursive for another subscriber: the children
			// change is made from the child's creation or deletion.
			done = s.Event(zk.EventNodeChildrenChanged, e.path, zxid)
		}
		if done {
			p.dropSubLocked(e, s, wc)
		}
	}
}

// parentOf is the parent of a server path ("" for "/").
func parentOf(path string) string {
	if path == "/" {
		return ""
	}
	return parent(path)
}

// parent is the parent of a path other than "/" ("/" for "/a"), as
// framework.SplitPath has it.
func parent(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}
