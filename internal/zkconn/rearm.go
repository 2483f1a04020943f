package zkconn

import (
	"time"

	"go.uber.org/zap"

	"github.com/gocurator/curator/internal/zkwire"
)

// dialed learns, for a new connection, whether its server has persistent
// watches: known lacking if it answered UNIMPLEMENTED before; else, if
// any watch will be re-armed on it, asked with srvr now.
func (p *Registry) dialed(wc *Conn) {
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
func (p *Registry) probe(wc *Conn) {
	v, err := serverVersion(wc.dialAgain)
	if err != nil {
		p.log.Debug("srvr failed; persistent watches unknown until AddWatch answers", zap.String("server", wc.addr), zap.Error(err))
		return
	}
	if hasPersistentWatches(v) {
		wc.caps.CompareAndSwap(capUnknown, capYes)
	} else {
		wc.caps.Store(capNo)
	}
}

// unimplemented records that wc's server refused a request of op: for
// AddWatch, it lacks persistent watches (ZooKeeper 3.5 answers so, then
// drops the connection), and no later connection to it is sent one.
func (p *Registry) unimplemented(wc *Conn, op int32) {
	if op != zkwire.OpAddWatch && op != zkwire.OpSetWatches2 {
		return
	}
	wc.caps.Store(capNo)
	p.mu.Lock()
	p.lacking[wc.addr] = true
	p.mu.Unlock()
	p.log.Info("server lacks persistent watches; subscribers fall back to one-shot watches", zap.String("server", wc.addr))
}

// connected arms every wanted watch on a new connection (its connect
// response just came, so nothing of go-zookeeper's is written yet) and
// tells every subscriber.
func (p *Registry) connected(wc *Conn, session int64) {
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
	p.log.Debug("arming persistent watches again", zap.String("server", wc.addr), zap.Int64("session", session),
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
func (p *Registry) resyncLocked(wc *Conn, newSession, armed bool) {
	for _, e := range p.entries {
		for s := range e.subs {
			if !s.Resync(newSession, armed) {
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
func (p *Registry) rearm2Locked(wc *Conn, then func(int32, int64)) int {
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
