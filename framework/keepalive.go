package framework

import (
	"time"
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
// pacing (zkconn.PacedHosts) it leaves a cut of 0.8 of the timeout inside
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
		next := w.Keepalive(now, every)
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
