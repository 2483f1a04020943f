package framework

import (
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/connstate"
)

// connEvent is a go-zookeeper event tagged with the connection it came from,
// or the client-side expiry timer firing (expire set).
type connEvent struct {
	gen     uint64
	ev      zk.Event
	expire  bool
	suspend uint64 // which Suspended the expiry timer belongs to
}

// eventQueue is unbounded: go-zookeeper's callback pushes without ever
// blocking or dropping (its own event channel holds six and drops the rest).
type eventQueue struct {
	mu    sync.Mutex
	items []connEvent
	wake  chan struct{}
}

func newEventQueue() *eventQueue { return &eventQueue{wake: make(chan struct{}, 1)} }

func (q *eventQueue) push(e connEvent) {
	q.mu.Lock()
	q.items = append(q.items, e)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *eventQueue) drain() []connEvent {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	return items
}

// run is the client's event goroutine: it turns go-zookeeper's session events
// into connection states. It never runs listener code.
func (c *Client) run() {
	defer c.wg.Done()
	for {
		select {
		case <-c.events.wake:
			for _, e := range c.events.drain() {
				c.handle(e)
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
		if c.state == connstate.Suspended && e.suspend == c.suspendSeq {
			c.log.Warn("session expired on the client side: suspended for the session timeout",
				zap.Int64("session", c.session))
			c.loseLocked()
			c.replaceLocked()
		}
		return
	}
	if e.ev.Type != zk.EventSession {
		return
	}
	switch e.ev.State {
	case zk.StateHasSession:
		c.stopExpiryLocked()
		sid := c.h.conn.SessionID()
		switch {
		case c.state == 0:
			c.session = sid
			c.setStateLocked(connstate.Connected)
			close(c.first)
		case c.state == connstate.Lost:
			c.session = sid
			c.setStateLocked(connstate.Reconnected)
		case sid != c.session:
			c.loseLocked()
			c.session = sid
			c.setStateLocked(connstate.Reconnected)
		case c.state == connstate.Suspended:
			c.setStateLocked(connstate.Reconnected)
		}
	case zk.StateConnectedReadOnly:
		if c.state != 0 {
			c.setStateLocked(connstate.ReadOnly)
		}
	case zk.StateDisconnected:
		if c.state.IsConnected() {
			c.setStateLocked(connstate.Suspended)
			c.armExpiryLocked()
		}
	case zk.StateExpired:
		c.stopExpiryLocked()
		if c.state != 0 && c.state != connstate.Lost {
			c.loseLocked()
		}
	case zk.StateAuthFailed:
		c.log.Error("authentication failed", zap.String("server", e.ev.Server))
	}
}

func (c *Client) setStateLocked(s connstate.State) {
	c.state = s
	close(c.changed)
	c.changed = make(chan struct{})
	c.listeners.Publish(s)
	c.log.Info("connection state", zap.Stringer("state", s), zap.Int64("session", c.session))
}

func (c *Client) loseLocked() {
	c.session = 0
	c.setStateLocked(connstate.Lost)
}

// armExpiryLocked starts the client-side expiry clock: Suspended for the
// negotiated session timeout (times the configured percent) means the server
// has expired the session by now, even though no server could say so.
func (c *Client) armExpiryLocked() {
	c.suspendSeq++
	seq, gen := c.suspendSeq, c.gen
	ms := c.h.wire.timeout()
	if ms <= 0 {
		ms = c.opts.sessionTimeout.Milliseconds()
	}
	d := time.Duration(ms) * time.Millisecond * time.Duration(c.opts.expiryPercent) / 100
	c.expiry = time.AfterFunc(d, func() {
		c.events.push(connEvent{gen: gen, expire: true, suspend: seq})
	})
}

func (c *Client) stopExpiryLocked() {
	if c.expiry != nil {
		c.expiry.Stop()
		c.expiry = nil
	}
	c.suspendSeq++
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
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		old.conn.Close()
	}()
}
