package zkconn

import (
	"sync"
	"sync/atomic"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/internal/zkwire"
)

// Capabilities of a connection's server: whether it has persistent
// watches (Conn.caps).
const (
	capUnknown int32 = iota
	capYes
	capNo
)

// Registry is the client's registry of persistent watches (see the
// package doc): the desired state, armed on every connection a Wire made
// with it dials, and the router of their events. One per client, shared
// by the client's successive connections.
type Registry struct {
	log  *zap.Logger
	set  *Counts      // go-zookeeper's one-shot watches, as counted
	live func() *Conn // the client's live connection, nil between connections

	n   atomic.Int32  // entries, for active() without the lock
	xid atomic.Uint32 // the next of the client's own xids

	mu      sync.Mutex
	entries map[string]*entry // by server path
	lacking map[string]bool   // server addresses that answered AddWatch with UNIMPLEMENTED
	session int64             // the session of the last connection
	// gone holds the one-shot watches given back (Unwatch) that
	// go-zookeeper still lists: kept out of its setWatches while no watch
	// of the client wants them again, until the session ends. Keys are
	// server tables: KindData (data and exist watches) or KindChild.
	gone map[watchKey]bool
}

// entry is one server path's watch.
type entry struct {
	path      string
	mode      int32 // zkwire.ModePersistent or ModePersistentRecursive
	subs      map[*Subscriber]struct{}
	recursive int // subscribers that want the subtree
}

// Subscriber is a subscriber of a path's events (a Watcher of the
// client's). Its funcs are called with the registry's lock held, on
// go-zookeeper's receive goroutine: they must not block, nor call the
// Registry.
type Subscriber struct {
	// Recursive asks for the events of the path's subtree too.
	Recursive bool
	// Event is called for each event routed to the subscriber, with the
	// server's path. It reports whether the subscriber is done (it is
	// then dropped).
	Event func(t zk.EventType, path string, zxid int64) (done bool)
	// Resync is called when a new connection (newSession: and a new
	// session) has armed the watch again (armed), or could not (armed
	// false: the server lacks persistent watches). It reports whether
	// the subscriber stays.
	Resync func(newSession, armed bool) (stay bool)

	// oneShot marks a one-shot watch of kind served from the path's
	// persistent watch (see OneShot), which Unwatch can give back.
	oneShot bool
	kind    Kind
}

// NewRegistry returns an empty registry. log gets its debug and info
// lines; set is the client's count of go-zookeeper's one-shot watches;
// live returns the client's live connection (nil between connections).
func NewRegistry(log *zap.Logger, set *Counts, live func() *Conn) *Registry {
	return &Registry{log: log, set: set, live: live, entries: map[string]*entry{}, lacking: map[string]bool{}, gone: map[watchKey]bool{}}
}

// active reports whether any persistent watch is wanted: notifications
// are looked at only then.
func (p *Registry) active() bool { return p != nil && p.n.Load() > 0 }

// nextXid returns one of the client's own xids.
func (p *Registry) nextXid() int32 {
	return int32(ownXidBase - int64(p.xid.Add(1)%ownXidSpan))
}

// sendLocked writes a request of the client's own on wc.
func (p *Registry) sendLocked(wc *Conn, op int32, body []byte, then func(int32, int64)) (<-chan int32, error) {
	xid := p.nextXid()
	return wc.inject(xid, op, zkwire.Request(xid, op, body), then)
}

// Subscribe adds s to path's watch and, if the server's watch must be
// added or widened, writes the AddWatch on the live connection: the
// channel returned then gets its reply's error code (nil: nothing to
// wait for). Without a connection the watch is armed at the next one.
// ok is false, and nothing is added, when the live connection's server
// lacks persistent watches.
func (p *Registry) Subscribe(path string, s *Subscriber) (reply <-chan int32, ok bool, err error) {
	wc := p.live()
	p.mu.Lock()
	defer p.mu.Unlock()
	if wc != nil && wc.caps.Load() == capNo {
		return nil, false, nil
	}
	e := p.entries[path]
	if e == nil {
		e = &entry{path: path, mode: zkwire.ModePersistent, subs: map[*Subscriber]struct{}{}}
		p.entries[path] = e
		p.n.Add(1)
	}
	if _, dup := e.subs[s]; dup {
		return nil, true, nil // a retry of the same subscription
	}
	e.subs[s] = struct{}{}
	old := e.mode
	if s.Recursive {
		e.recursive++
		e.mode = zkwire.ModePersistentRecursive
	}
	if wc == nil || (len(e.subs) > 1 && old == e.mode) {
		return nil, true, nil
	}
	reply, err = p.sendLocked(wc, zkwire.OpAddWatch, zkwire.AddWatchBody(path, e.mode), nil)
	if err != nil {
		// The connection failed under the write: the next one arms it.
		return nil, true, nil
	}
	return reply, true, nil
}

// Unsubscribe removes s from path's watch; the server's watch is removed
// (or narrowed) on the live connection if nobody else needs it.
func (p *Registry) Unsubscribe(path string, s *Subscriber) {
	wc := p.live()
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.entries[path]; e != nil {
		if _, ok := e.subs[s]; ok {
			p.dropSubLocked(e, s, wc)
		}
	}
}

// dropSubLocked removes s from e, and the server's watch with the last
// subscriber: RemoveWatches of type Any (3.6-3.8 hold a persistent watch
// in both their tables); one-shot watches of go-zookeeper's on the path
// (set before the persistent one, which the server turned persistent) are
// then set again as one-shots. If the last recursive subscriber goes, the
// watch is narrowed to persistent.
func (p *Registry) dropSubLocked(e *entry, s *Subscriber, wc *Conn) {
	delete(e.subs, s)
	if s.Recursive {
		e.recursive--
	}
	if len(e.subs) == 0 {
		delete(p.entries, e.path)
		p.n.Add(-1)
		if wc == nil || wc.caps.Load() == capNo {
			return
		}
		var then func(int32, int64)
		if p.set.watching(e.path) {
			// One-shot watches of go-zookeeper's set before the
			// persistent one (which the server turned persistent)
			// still wait: once it is removed, they are set again as
			// one-shots, from the removal's zxid, so a change in
			// between fires them.
			path := e.path
			then = func(_ int32, zxid int64) { p.resetOneShots(wc, path, zxid) }
		}
		_, _ = p.sendLocked(wc, zkwire.OpRemoveWatches, zkwire.RemoveWatchesBody(e.path, zkwire.WatcherAny), then)
		return
	}
	if e.recursive == 0 && e.mode == zkwire.ModePersistentRecursive {
		e.mode = zkwire.ModePersistent
		if wc != nil && wc.caps.Load() != capNo {
			_, _ = p.sendLocked(wc, zkwire.OpAddWatch, zkwire.AddWatchBody(e.path, e.mode), nil)
		}
	}
}

// resetOneShots sets again, with a SetWatches from zxid, the one-shot
// watches of go-zookeeper's that wait on path (see dropSubLocked). It
// runs on the receive goroutine, as the removal's reply is read.
func (p *Registry) resetOneShots(wc *Conn, path string, zxid int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.entries[path] != nil {
		return // watched again meanwhile: served by the persistent watch
	}
	req := zkwire.SetWatches{RelativeZxid: zxid, Data: []string{}, Exist: []string{}, Child: []string{}}
	switch {
	case p.set.count(path, KindData) > 0:
		req.Data = []string{path}
	case p.set.count(path, KindExist) > 0:
		req.Exist = []string{path}
	}
	if p.set.count(path, KindChild) > 0 {
		req.Child = []string{path}
	}
	if len(req.Data)+len(req.Exist)+len(req.Child) > 0 {
		_, _ = p.sendLocked(wc, zkwire.OpSetWatches, req.Append(nil, false), nil)
	}
}

// covers reports whether the registry holds a server watch on path, on
// which a one-shot watch must not be set (ZOOKEEPER-4466).
func (p *Registry) coversLocked(path string) bool { return p.entries[path] != nil }
