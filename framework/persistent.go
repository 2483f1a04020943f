package framework

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/internal/zkwire"
)

// Persistent watches (ZooKeeper 3.6+ AddWatch) without forking
// go-zookeeper, which lacks them: the client owns go-zookeeper's socket
// (sniff.go) and writes its own requests between go-zookeeper's frames,
// with xids from a range go-zookeeper never uses (isOwnXid), and takes
// their replies off the socket before go-zookeeper reads. The registry
// below is the desired state: for each server path, the subscribers that
// want events of it (Watchers, and one-shot watches served from it), and
// the mode the server holds (recursive if any subscriber wants the
// subtree).
//
// The rules, and why:
//   - One server watch per path per session. ZooKeeper 3.6-3.8 keeps one
//     mode per path and session (ZOOKEEPER-4466): a one-shot watch set on
//     a path with a persistent watch turns it into a one-shot, and a
//     persistent watch added to a recursive one's path narrows it. So a
//     path holds one server watch, persistent or recursive; a one-shot
//     watch (GetW, ExistsW, ChildrenW) asked for on it is served from its
//     events instead of being set on the server, and go-zookeeper's
//     setWatches after a reconnection has the path taken out of its lists.
//   - Segment-wise matching: a recursive watch on /a gets events of /a and
//     of paths under /a/, never /ab.
//   - NodeChildrenChanged never reaches a recursive subscriber: 3.6-3.8
//     keep the recursive watch in the child table too and send the
//     children changes of every node below (ZOOKEEPER-4475). A
//     non-recursive subscriber of a path held recursive has its children
//     changes made from the creations and deletions of its children.
//   - Re-armed on every new connection and every new session, at the
//     connect response, before go-zookeeper sends anything: one
//     SetWatches2 (105) with the persistent lists on a server known to
//     have it (srvr says 3.6 or later), else one AddWatch per path; never
//     105 or 106 to a server known to lack them (srvr says older, or it
//     answered an AddWatch with UNIMPLEMENTED, as 3.5 does before it drops
//     the connection). Every subscriber is then told (resync): events of
//     the time between connections are lost, by ZooKeeper's design.
//   - Removed (RemoveWatches, type Any) once the last subscriber of a path
//     goes, while connected; a path nobody wants is not re-armed.

const (
	capUnknown int32 = iota
	capYes
	capNo
)

// persistentWatches is the client's registry (see above).
type persistentWatches struct {
	c *Client

	n   atomic.Int32  // entries, for active() without the lock
	xid atomic.Uint32 // the next of the client's own xids

	mu      sync.Mutex
	entries map[string]*pwEntry // by server path
	lacking map[string]bool     // server addresses that answered AddWatch with UNIMPLEMENTED
	session int64               // the session of the last connection
	// gone holds the one-shot watches given back (Unwatch) that
	// go-zookeeper still lists: kept out of its setWatches while no watch
	// of the client wants them again, until the session ends. Keys are
	// server tables: watchData (data and exist watches) or watchChild.
	gone map[watchKey]bool
}

// pwEntry is one server path's watch.
type pwEntry struct {
	path      string
	mode      int32 // zkwire.ModePersistent or ModePersistentRecursive
	subs      map[*pwSub]struct{}
	recursive int // subscribers that want the subtree
}

// pwSub is a subscriber of a path's events.
type pwSub struct {
	recursive bool
	// oneShot marks a one-shot watch of kind served from the path's
	// persistent watch (see oneShot), which Unwatch can give back.
	oneShot bool
	kind    watchKind
	// event is called with the registry's lock held, on go-zookeeper's
	// receive goroutine, for each event routed to the subscriber, with
	// the server's path; it must not block. It reports whether the
	// subscriber is done (a one-shot watch that fired).
	event func(t zk.EventType, path string, zxid int64) (done bool)
	// resync is called, the same way, when a new connection (new: and a
	// new session) has armed the watch again (armed), or could not
	// (armed false: the server lacks persistent watches). It reports
	// whether the subscriber stays.
	resync func(newSession, armed bool) (stay bool)
}

func newPersistentWatches(c *Client) *persistentWatches {
	return &persistentWatches{c: c, entries: map[string]*pwEntry{}, lacking: map[string]bool{}, gone: map[watchKey]bool{}}
}

// active reports whether any persistent watch is wanted: notifications
// are looked at only then.
func (p *persistentWatches) active() bool { return p != nil && p.n.Load() > 0 }

// nextXid returns one of the client's own xids.
func (p *persistentWatches) nextXid() int32 {
	return int32(ownXidBase - int64(p.xid.Add(1)%ownXidSpan))
}

// dialed learns, for a new connection, whether its server has persistent
// watches: known lacking if it answered UNIMPLEMENTED before; else, if
// any watch will be re-armed on it, asked with srvr now.
func (p *persistentWatches) dialed(wc *wireConn) {
	p.mu.Lock()
	lacking, need := p.lacking[wc.addr], len(p.entries) > 0
	p.mu.Unlock()
	switch {
	case lacking:
		wc.caps.Store(capNo)
	case need:
		p.probe(wc)
	}
}

// probeTimeout bounds srvr.
const probeTimeout = 3 * time.Second

// probe asks wc's server for its version (srvr) and records what it says
// about persistent watches: unknown if it does not answer (srvr not in
// 4lw.commands.whitelist, say).
func (p *persistentWatches) probe(wc *wireConn) {
	v, err := serverVersion(wc.dialAgain)
	if err != nil {
		p.c.log.Debug("srvr failed; persistent watches unknown until AddWatch answers", zap.String("server", wc.addr), zap.Error(err))
		return
	}
	if hasPersistentWatches(v) {
		wc.caps.CompareAndSwap(capUnknown, capYes)
	} else {
		wc.caps.Store(capNo)
	}
}

// serverVersion dials a server and reads its version off srvr's answer
// ("Zookeeper version: 3.8.0-..., built on ...").
func serverVersion(dial func() (net.Conn, error)) (string, error) {
	if dial == nil {
		return "", errors.New("no dialer")
	}
	conn, err := dial()
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(probeTimeout)); err != nil {
		return "", err
	}
	if _, err := io.WriteString(conn, "srvr"); err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(conn, 4096))
	if err != nil && len(b) == 0 {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Zookeeper version:"); ok {
			v = strings.TrimSpace(v)
			if i := strings.IndexAny(v, "-, "); i >= 0 {
				v = v[:i]
			}
			return v, nil
		}
	}
	return "", fmt.Errorf("srvr: no version in %q", strings.TrimSpace(string(b)))
}

// hasPersistentWatches reports whether version (major.minor.patch) is
// 3.6 or later.
func hasPersistentWatches(version string) bool {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return major > 3 || major == 3 && minor >= 6
}

// unimplemented records that wc's server refused a request of op: for
// AddWatch, it lacks persistent watches (ZooKeeper 3.5 answers so, then
// drops the connection), and no later connection to it is sent one.
func (p *persistentWatches) unimplemented(wc *wireConn, op int32) {
	if op != zkwire.OpAddWatch && op != zkwire.OpSetWatches2 {
		return
	}
	wc.caps.Store(capNo)
	p.mu.Lock()
	p.lacking[wc.addr] = true
	p.mu.Unlock()
	p.c.log.Info("server lacks persistent watches; subscribers fall back to one-shot watches", zap.String("server", wc.addr))
}

// connected arms every wanted watch on a new connection (its connect
// response just came, so nothing of go-zookeeper's is written yet) and
// tells every subscriber.
func (p *persistentWatches) connected(wc *wireConn, session int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	newSession := p.session != 0 && session != p.session
	p.session = session
	if newSession {
		clear(p.gone) // go-zookeeper dropped every one-shot watch of the old session
	}
	if len(p.entries) == 0 {
		return
	}
	p.c.log.Debug("arming persistent watches again", zap.String("server", wc.addr), zap.Int64("session", session),
		zap.Bool("newSession", newSession), zap.Int("paths", len(p.entries)), zap.Int32("capability", wc.caps.Load()))
	if wc.caps.Load() == capNo {
		p.resyncLocked(nil, newSession, false)
		return
	}
	// Subscribers are told once the server has armed every watch (its
	// last reply is in): from then on, a change made by anyone is seen.
	var (
		left int
		sent bool
	)
	done := func(int32, int64) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if left--; left == 0 && sent {
			p.resyncLocked(wc, newSession, true)
		}
	}
	if wc.caps.Load() == capYes {
		left = p.rearm2Locked(wc, done)
	} else {
		for _, e := range p.entries {
			if _, err := p.sendLocked(wc, zkwire.OpAddWatch, zkwire.AddWatchBody(e.path, e.mode), done); err != nil {
				return
			}
			left++
		}
	}
	sent = true
	if left == 0 {
		p.resyncLocked(wc, newSession, true)
	}
}

// resyncLocked tells every subscriber of a new connection.
func (p *persistentWatches) resyncLocked(wc *wireConn, newSession, armed bool) {
	for _, e := range p.entries {
		for s := range e.subs {
			if !s.resync(newSession, armed) {
				p.dropSubLocked(e, s, wc)
			}
		}
	}
}

// setWatches2Limit bounds one SetWatches2 request, as go-zookeeper and the
// Java client bound setWatches (the server reads up to jute.maxbuffer).
const setWatches2Limit = 128 << 10

// rearm2Locked sends the wanted watches in SetWatches2 requests, and
// returns how many it sent (their replies call then).
func (p *persistentWatches) rearm2Locked(wc *wireConn, then func(int32, int64)) int {
	var req zkwire.SetWatches
	size, n := 0, 0
	flush := func() bool {
		if len(req.Persistent)+len(req.PersistentRecursive) == 0 {
			return true
		}
		_, err := p.sendLocked(wc, zkwire.OpSetWatches2, req.Append(nil, true), then)
		req, size = zkwire.SetWatches{}, 0
		if err == nil {
			n++
		}
		return err == nil
	}
	for _, e := range p.entries {
		if size+4+len(e.path) > setWatches2Limit && !flush() {
			return n
		}
		size += 4 + len(e.path)
		if e.mode == zkwire.ModePersistentRecursive {
			req.PersistentRecursive = append(req.PersistentRecursive, e.path)
		} else {
			req.Persistent = append(req.Persistent, e.path)
		}
	}
	flush()
	return n
}

// sendLocked writes a request of the client's own on wc.
func (p *persistentWatches) sendLocked(wc *wireConn, op int32, body []byte, then func(int32, int64)) (<-chan int32, error) {
	xid := p.nextXid()
	return wc.inject(xid, op, zkwire.Request(xid, op, body), then)
}

// filterSetWatchesLocked takes the paths the registry holds a watch on
// out of go-zookeeper's setWatches request p (a whole frame), so that its
// one-shot lists never turn a persistent watch into a one-shot (the one-
// shot watches it sets again there are served by the persistent one). p
// is returned as it is if it names none, or is not understood.
func (p *persistentWatches) filterSetWatchesLocked(frame []byte) []byte {
	if len(p.entries) == 0 && len(p.gone) == 0 || len(frame) < 12 {
		return frame
	}
	req, err := zkwire.ParseSetWatches(frame[12:], false)
	if err != nil {
		return frame
	}
	keep := func(v []string, table watchKind) ([]string, bool) {
		out := v[:0:0]
		for _, path := range v {
			if p.entries[path] == nil && !p.givenBackLocked(path, table) {
				out = append(out, path)
			}
		}
		return out, len(out) != len(v)
	}
	var c1, c2, c3 bool
	req.Data, c1 = keep(req.Data, watchData)
	req.Exist, c2 = keep(req.Exist, watchData)
	req.Child, c3 = keep(req.Child, watchChild)
	if !c1 && !c2 && !c3 {
		return frame
	}
	xid := int32(uint32(frame[4])<<24 | uint32(frame[5])<<16 | uint32(frame[6])<<8 | uint32(frame[7]))
	return zkwire.Request(xid, zkwire.OpSetWatches, req.Append(nil, false))
}

// notify routes a notification to the subscribers of its path and of its
// ancestors, and reports whether it is consumed: it reached a subscriber,
// and no one-shot watch of go-zookeeper's waits for it.
func (p *persistentWatches) notify(wc *wireConn, ev zkwire.WatcherEvent, zxid int64) bool {
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
		a, _ = SplitPath(a)
	}
	p.mu.Unlock()
	return delivered && !p.c.set.wants(zk.Event{Type: t, Path: ev.Path})
}

// routeLocked hands an event of path to e's subscribers that want it.
func (p *persistentWatches) routeLocked(wc *wireConn, e *pwEntry, t zk.EventType, path string, zxid int64) {
	self := path == e.path
	child := !self && parentOf(path) == e.path
	for s := range e.subs {
		var done bool
		switch {
		case s.recursive:
			// ZOOKEEPER-4475: a recursive watch's children changes are
			// noise; creations and deletions say it all.
			if t != zk.EventNodeChildrenChanged {
				done = s.event(t, path, zxid)
			}
		case e.mode == zkwire.ModePersistent:
			if self {
				done = s.event(t, path, zxid)
			}
		case self && t != zk.EventNodeChildrenChanged:
			done = s.event(t, path, zxid)
		case child && (t == zk.EventNodeCreated || t == zk.EventNodeDeleted):
			// Held recursive for another subscriber: the children
			// change is made from the child's creation or deletion.
			done = s.event(zk.EventNodeChildrenChanged, e.path, zxid)
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
	parent, _ := SplitPath(path)
	return parent
}

// subscribe adds s to path's watch and, if the server's watch must be
// added or widened, writes the AddWatch on the live connection: the
// channel returned then gets its reply's error code (nil: nothing to
// wait for). Without a connection the watch is armed at the next one.
// ok is false, and nothing is added, when the live connection's server
// lacks persistent watches.
func (p *persistentWatches) subscribe(path string, s *pwSub) (reply <-chan int32, wc *wireConn, ok bool, err error) {
	wc = p.c.liveWire()
	p.mu.Lock()
	defer p.mu.Unlock()
	if wc != nil && wc.caps.Load() == capNo {
		return nil, wc, false, nil
	}
	e := p.entries[path]
	if e == nil {
		e = &pwEntry{path: path, mode: zkwire.ModePersistent, subs: map[*pwSub]struct{}{}}
		p.entries[path] = e
		p.n.Add(1)
	}
	if _, dup := e.subs[s]; dup {
		return nil, wc, true, nil // a retry of the same subscription
	}
	e.subs[s] = struct{}{}
	old := e.mode
	if s.recursive {
		e.recursive++
		e.mode = zkwire.ModePersistentRecursive
	}
	if wc == nil || (len(e.subs) > 1 && old == e.mode) {
		return nil, wc, true, nil
	}
	reply, err = p.sendLocked(wc, zkwire.OpAddWatch, zkwire.AddWatchBody(path, e.mode), nil)
	if err != nil {
		// The connection failed under the write: the next one arms it.
		return nil, wc, true, nil
	}
	return reply, wc, true, nil
}

// unsubscribe removes s from path's watch; the server's watch is removed
// (or narrowed) on the live connection if nobody else needs it.
func (p *persistentWatches) unsubscribe(path string, s *pwSub) {
	wc := p.c.liveWire()
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
func (p *persistentWatches) dropSubLocked(e *pwEntry, s *pwSub, wc *wireConn) {
	delete(e.subs, s)
	if s.recursive {
		e.recursive--
	}
	if len(e.subs) == 0 {
		delete(p.entries, e.path)
		p.n.Add(-1)
		if wc == nil || wc.caps.Load() == capNo {
			return
		}
		var then func(int32, int64)
		if p.c.set.watching(e.path) {
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
func (p *persistentWatches) resetOneShots(wc *wireConn, path string, zxid int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.entries[path] != nil {
		return // watched again meanwhile: served by the persistent watch
	}
	req := zkwire.SetWatches{RelativeZxid: zxid, Data: []string{}, Exist: []string{}, Child: []string{}}
	switch {
	case p.c.set.count(path, watchData) > 0:
		req.Data = []string{path}
	case p.c.set.count(path, watchExist) > 0:
		req.Exist = []string{path}
	}
	if p.c.set.count(path, watchChild) > 0 {
		req.Child = []string{path}
	}
	if len(req.Data)+len(req.Exist)+len(req.Child) > 0 {
		_, _ = p.sendLocked(wc, zkwire.OpSetWatches, req.Append(nil, false), nil)
	}
}

// covers reports whether the registry holds a server watch on path, on
// which a one-shot watch must not be set (ZOOKEEPER-4466).
func (p *persistentWatches) coversLocked(path string) bool { return p.entries[path] != nil }

// oneShot serves a one-shot watch of kind on path from the path's
// persistent watch, if it has one: it returns the channel (go-zookeeper's
// kind: one event, then closed) and a function that takes the watch back
// (the read that set it failed), or nil if the watch must be set on the
// server as usual. The event comes as the frame does, so the order of
// events among channels is go-zookeeper's. After a reconnection the
// channel gets an event of its kind (the change may have been missed
// while disconnected: read again), and on a new session EventNotWatching,
// as go-zookeeper ends its own watches.
func (p *persistentWatches) oneShot(path string, kind watchKind) (<-chan zk.Event, func()) {
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
	s := &pwSub{oneShot: true, kind: kind}
	s.event = func(t zk.EventType, ep string, zxid int64) bool {
		if ep != path {
			return false
		}
		switch kind {
		case watchData:
			if t != zk.EventNodeDataChanged && t != zk.EventNodeDeleted {
				return false
			}
		case watchExist:
			if t == zk.EventNodeChildrenChanged {
				return false
			}
		case watchChild:
			if t != zk.EventNodeChildrenChanged && t != zk.EventNodeDeleted {
				return false
			}
		}
		return fire(zk.Event{Type: t, State: zk.StateHasSession, Path: path})
	}
	s.resync = func(newSession, _ bool) bool {
		if newSession {
			fire(notWatching(path, zk.ErrSessionExpired))
			return false
		}
		t := zk.EventNodeDataChanged
		if kind == watchChild {
			t = zk.EventNodeChildrenChanged
		}
		fire(zk.Event{Type: t, State: zk.StateHasSession, Path: path})
		return false
	}
	e := p.entries[path]
	e.subs[s] = struct{}{}
	return ch, func() { p.unsubscribe(path, s) }
}

// liveWire returns the live connection's wire, nil between connections.
func (c *Client) liveWire() *wireConn {
	c.mu.Lock()
	h := c.h
	c.mu.Unlock()
	if h == nil {
		return nil
	}
	h.wire.mu.Lock()
	defer h.wire.mu.Unlock()
	return h.wire.live
}

// PersistentWatches reports whether the server of the live connection has
// persistent watches (ZooKeeper 3.6 or later), asking it (srvr) if not
// known yet. It waits for a connection on ctx. A server that does not
// answer srvr (not in 4lw.commands.whitelist) is taken to have them until
// it refuses an AddWatch.
func (c *Client) PersistentWatches(ctx context.Context) (bool, error) {
	if c == nil {
		return false, ErrNilClient
	}
	wc, err := c.wireFor(ctx)
	if err != nil {
		return false, err
	}
	return wc.caps.Load() != capNo, nil
}

// ServerVersion asks the live connection's server for its version (srvr,
// on a connection of its own made with the client's dialer) and returns
// it ("3.8.0"), or "" if the server does not say (srvr not in its
// 4lw.commands.whitelist). It waits for a connection on ctx.
func (c *Client) ServerVersion(ctx context.Context) (string, error) {
	if c == nil {
		return "", ErrNilClient
	}
	wc, err := c.wireFor(ctx)
	if err != nil {
		return "", err
	}
	v, err := serverVersion(wc.dialAgain)
	if err != nil {
		return "", nil
	}
	return v, nil
}

// wireFor returns the live connection, once connected, with what its
// server says of persistent watches asked if not known.
func (c *Client) wireFor(ctx context.Context) (*wireConn, error) {
	if ctx == nil {
		return nil, invalid("nil context")
	}
	for {
		if err := c.waitConnected(ctx); err != nil {
			return nil, err
		}
		if wc := c.liveWire(); wc != nil {
			if wc.caps.Load() == capUnknown {
				c.pw.probe(wc)
			}
			return wc, nil
		}
		select {
		case <-c.StateChanged():
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// giveBackOneShot drops one one-shot watch of kind served from path's
// persistent watch (an exists watch may stand for a data one: see
// Unwatch), and reports whether there was one.
func (p *persistentWatches) giveBackOneShot(path string, kind watchKind) bool {
	wc := p.c.liveWire()
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
