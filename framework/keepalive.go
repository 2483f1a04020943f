package framework

import (
	"encoding/binary"
	"time"

	"github.com/gocurator/curator/internal/zkwire"
)

// The keepalive keeps the client-side expiry's clock fresh. The watchdog
// (checkExpiryLocked) counts from the send time of the last request a
// server answered, and it must: the server may have heard nothing from us
// since then. But an idle session sends only go-zookeeper's pings, every
// third of the session timeout, so when a cut begins the last answered send
// may already be a third of the timeout old, and a cut the server survives
// easily (0.6 of the timeout) cost the session: Lost, every ephemeral node
// deleted and made again, every cache resynchronised (issue 33, item 9).
//
// So a connected session whose last answered send is keepaliveDivisor-th
// of the timeout old, and that has not pinged for as long, sends a ping of
// its own (12 bytes; the server answers it without touching the data
// tree). The deadline still counts from the send time of the last answered
// request, never later; only that send is never more than about a
// twentieth of the timeout old when a cut begins. A busy client sends none:
// the replies to its requests keep the clock fresh. An idle one sends
// about keepaliveDivisor pings per session timeout: 0.33 a second with
// the default 60 s session, 5 a second with a 4 s one.

// keepaliveDivisor: the keepalive pings once the last answered send is a
// keepaliveDivisor-th of the negotiated timeout old. With the redial
// pacing (hostprovider.go) it leaves a cut of 0.8 of the timeout inside
// the 90% deadline: 0.05 (the age when the cut begins) + 0.8 + the redial
// and the connect round trip (under 0.05).
const keepaliveDivisor = 20

// minKeepalive bounds the keepalive interval from below, for the shortest
// sessions a server allows.
const minKeepalive = 10 * time.Millisecond

// keepaliveInterval is how old the last answered send may get on an idle
// connection before the client pings: a twentieth of the session timeout.
func keepaliveInterval(timeout time.Duration) time.Duration {
	return max(timeout/keepaliveDivisor, minKeepalive)
}

// pingXid and opPing are ZooKeeper's: the server answers every ping with
// xid -2, whatever the request carried, so the client's pings use it too.
const (
	pingXid int32 = -2
	opPing  int32 = zkwire.OpPing
)

// pingFrame is a whole ping request: length, xid, opcode.
var pingFrame = func() []byte {
	xid, op := pingXid, opPing
	b := binary.BigEndian.AppendUint32(nil, 8)
	b = binary.BigEndian.AppendUint32(b, uint32(xid))
	return binary.BigEndian.AppendUint32(b, uint32(op))
}()

// keepalive pings on the live connection if the last answered send and
// the last ping of the client's own are both every old or older at now,
// and returns when it should be asked again: every after the later of
// the two (after now). It blocks only while the ping is written (behind a
// frame go-zookeeper is writing, at most injectWriteTimeout).
func (w *wire) keepalive(now time.Time, every time.Duration) time.Time {
	w.mu.Lock()
	live := w.live
	fresh := w.lastAck
	if w.lastPing.After(fresh) {
		fresh = w.lastPing
	}
	w.mu.Unlock()
	if due := fresh.Add(every); now.Before(due) {
		return due
	}
	if live == nil || !live.established.Load() {
		// Between connections: the next session arms the keepalive.
		return now.Add(every)
	}
	at, err := live.ping()
	if err != nil {
		// The socket is closed; go-zookeeper reconnects.
		return now.Add(every)
	}
	w.mu.Lock()
	if at.After(w.lastPing) {
		w.lastPing = at
	}
	w.mu.Unlock()
	return at.Add(every)
}

// ping writes a ping between go-zookeeper's frames and returns its send
// time, taken before the write (so never after the server's receipt). Its
// reply, xid -2 like go-zookeeper's own pings' and answered in order with
// them, goes on to go-zookeeper, which ignores pings' replies; reading it,
// reply records the acknowledgement. A failed write closes the socket:
// part of the frame may have gone out.
func (c *wireConn) ping() (time.Time, error) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	at := c.w.clock.Now()
	c.sentMu.Lock()
	c.sent = append(c.sent, sentRequest{xid: pingXid, at: at})
	if recordOps.Load() {
		c.ops = append(c.ops, opPing)
	}
	c.sentMu.Unlock()
	_ = c.Conn.SetWriteDeadline(time.Now().Add(injectWriteTimeout))
	_, err := c.Conn.Write(pingFrame)
	_ = c.Conn.SetWriteDeadline(c.zkDeadline)
	if err != nil {
		c.Conn.Close()
		c.failWaiters()
		return at, err
	}
	return at, nil
}

// runKeepalive is the client's keepalive goroutine: it pings when the
// clock's timer (armKeepaliveLocked) says one may be due, and re-arms the
// timer for the next. It never runs on the event goroutine, which must
// never block, and a ping's write may.
func (c *Client) runKeepalive() {
	defer c.wg.Done()
	for {
		select {
		case <-c.kick:
		case <-c.ctx.Done():
			return
		}
		c.mu.Lock()
		if c.closed || !c.state.IsConnected() {
			// Re-armed at the next session or reconnection.
			c.mu.Unlock()
			continue
		}
		w, gen := c.h.wire, c.gen
		every := keepaliveInterval(c.negotiatedTimeoutLocked())
		c.mu.Unlock()
		now := c.opts.clock.Now()
		next := w.keepalive(now, every)
		c.mu.Lock()
		if !c.closed && c.gen == gen && c.state.IsConnected() {
			c.armKeepaliveLocked(next.Sub(c.opts.clock.Now()))
		}
		c.mu.Unlock()
	}
}

// armKeepaliveLocked (re)arms the keepalive's timer for d from now.
func (c *Client) armKeepaliveLocked(d time.Duration) {
	if c.opts.noKeepalive {
		return
	}
	if c.keepaliveTimer != nil {
		c.keepaliveTimer.Stop()
	}
	kick := c.kick
	c.keepaliveTimer = c.opts.clock.AfterFunc(d, func() {
		select {
		case kick <- struct{}{}:
		default: // a kick is pending already
		}
	})
}

// stopKeepaliveLocked disarms the keepalive's timer.
func (c *Client) stopKeepaliveLocked() {
	if c.keepaliveTimer != nil {
		c.keepaliveTimer.Stop()
		c.keepaliveTimer = nil
	}
}
