package framework

import (
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/internal/telemetry/clienttel"
)

// connEvent is a go-zookeeper event tagged with the connection it came from,
// or the client-side expiry watchdog firing (expire set).
type connEvent struct {
	gen    uint64
	ev     zk.Event
	expire bool
}

// run is the client's event goroutine: it turns go-zookeeper's session events
// into connection states. It never runs listener code.
func (c *Client) run() {
	defer c.wg.Done()
	for {
		select {
		case <-c.events.Wake():
			for _, e := range c.events.Take() {
				c.handle(e)
				c.fireGuards()
			}
		case <-c.ctx.Done():
			return
		}
	}
}

func (c *Client) handle(e connEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || e.gen != c.gen {
		return // from a replaced connection
	}
	if e.expire {
		c.checkExpiryLocked()
		return
	}
	if e.ev.Type != zk.EventSession {
		// The watch counts were updated as the notification was read
		// (by internal/zkconn), in step with go-zookeeper's own map.
		return
	}
	switch e.ev.State {
	case zk.StateHasSession:
		sid := c.h.conn.SessionID()
		switch {
		case c.state == 0:
			c.startSessionLocked(sid)
			c.setStateLocked(connstate.Connected)
			close(c.first)
		case c.state == connstate.Lost:
			c.startSessionLocked(sid)
			c.setStateLocked(connstate.Reconnected)
		case sid != c.session:
			// A new session: go-zookeeper dropped the old one's
			// watches and sets none again (see internal/zkconn, "The watch reset gate").
			c.h.wire.GiveUpWatchesSet()
			c.tel.Expired(clienttel.ExpiryServer)
			c.loseLocked()
			c.startSessionLocked(sid)
			c.setStateLocked(connstate.Reconnected)
		case c.state == connstate.Suspended:
			c.setStateLocked(connstate.Reconnected)
		}
		c.armExpiryLocked()
		// The connect request was just answered: the keepalive works out
		// when its first ping is due.
		c.armKeepaliveLocked(0)
	case zk.StateConnectedReadOnly:
		if c.state != 0 {
			c.setStateLocked(connstate.ReadOnly)
		}
	case zk.StateDisconnected:
		if c.state.IsConnected() {
			c.setStateLocked(connstate.Suspended)
			// The watchdog may be due already (nothing was
			// acknowledged for long before the connection dropped).
			c.checkExpiryLocked()
		}
	case zk.StateExpired:
		c.stopExpiryLocked()
		if c.state != 0 && c.state != connstate.Lost {
			c.tel.Expired(clienttel.ExpiryServer)
			c.loseLocked()
		}
	case zk.StateAuthFailed:
		c.log.Error("authentication failed", zap.String("server", e.ev.Server))
	}
}

func (c *Client) setStateLocked(s connstate.State) {
	c.state = s
	c.tel.StateChanged(s)
	c.tripGuardsLocked(s)
	c.changed.Notify()
	c.listeners.Publish(s)
	c.log.Info("connection state", zap.Stringer("state", s), zap.Int64("session", c.session))
}

func (c *Client) loseLocked() {
	c.endSessionLocked()
	c.setStateLocked(connstate.Lost)
}

// checkExpiryLocked is the client-side expiry watchdog. The server expires
// a session once it has heard nothing from the client for the negotiated
// session timeout, and it heard from us at the earliest when we sent the
// last request it answered. So once sessionDeadline of that send time has
// passed, the server may have expired the session and given our ephemeral
// nodes, and the locks they stand for, to others, even though no server
// could tell us: the client reports Suspended (if it was connected) and
// Lost, which end every hold under both error policies, and replaces the
// connection so that the next session is a new one. Before the deadline it
// re-arms itself for the deadline, which every answered request pushes back.
func (c *Client) checkExpiryLocked() {
	if c.state == 0 || c.state == connstate.Lost {
		c.stopExpiryLocked()
		return
	}
	now := c.opts.clock.Now()
	deadline := sessionDeadline(now, c.h.wire.Acked(), c.negotiatedTimeoutLocked(), c.opts.expiryPercent)
	if left := deadline.Sub(now); left > 0 {
		c.armExpiryAfterLocked(left)
		return
	}
	c.log.Warn("session expired on the client side: no reply to anything sent in the session timeout",
		zap.Int64("session", c.session), zap.Time("lastAcknowledgedSend", c.h.wire.Acked()))
	c.stopExpiryLocked()
	c.tel.Expired(clienttel.ExpiryClient)
	if c.state.IsConnected() {
		c.setStateLocked(connstate.Suspended)
	}
	c.loseLocked()
	c.replaceLocked()
}

// sessionDeadline returns when the client must consider its session lost:
// pct percent (at most maxExpiryPercent) of the negotiated session timeout
// after the send time of the last request a server answered. The server
// cannot have expired the session before lastAck + timeout; the rest of the
// timeout is the margin in which holders are told, before anyone else can
// be given their locks. A zero lastAck (nothing answered yet) gives a
// deadline counted from now.
func sessionDeadline(now, lastAck time.Time, timeout time.Duration, pct int) time.Time {
	pct = min(pct, maxExpiryPercent)
	if lastAck.IsZero() {
		lastAck = now
	}
	return lastAck.Add(timeout * time.Duration(pct) / 100)
}

// maxExpiryPercent caps WithSessionExpiryPercent: the last tenth of the
// session timeout is the safety margin.
const maxExpiryPercent = 90

// armExpiryLocked (re)starts the watchdog for a connected session.
func (c *Client) armExpiryLocked() { c.checkExpiryLocked() }

func (c *Client) armExpiryAfterLocked(d time.Duration) {
	if c.expiry != nil {
		c.expiry.Stop()
	}
	gen := c.gen
	c.expiry = c.opts.clock.AfterFunc(d, func() {
		c.events.Send(connEvent{gen: gen, expire: true})
	})
}

func (c *Client) stopExpiryLocked() {
	if c.expiry != nil {
		c.expiry.Stop()
		c.expiry = nil
	}
}

// negotiatedTimeoutLocked is SessionTimeout with c.mu held.
func (c *Client) negotiatedTimeoutLocked() time.Duration {
	if ms := c.h.wire.Timeout(); ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return c.opts.sessionTimeout
}

// replaceLocked swaps in a new connection after a client-side expiry, as
// Curator does, so that the next session is a new one: the old session's
// ephemeral nodes are gone for good, whatever the server thinks of it now.
func (c *Client) replaceLocked() {
	old := c.h
	h, err := c.dial(c.gen + 1)
	if err != nil {
		c.log.Error("replacing the connection failed; keeping the old one", zap.Error(err))
		return
	}
	c.gen++
	c.h = h
	old.wire.Retire() // its persistent watches are the new one's
	c.set.Reset()     // watches of the old connection are not set again
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		// A server that can still hear us ends the old session at once.
		c.closeConn(old, true)
	}()
}
