package framework

import "github.com/gocurator/curator/connstate"

// Session is one ZooKeeper session of a client, as etcd's concurrency
// Session is a lease: what is held in it lasts at most as long as it does.
// Done closes when the session is lost (Lost: expired, or declared expired
// by the client) or the client closes. Waiters select on it; holds, which
// also end on the states the client's ErrorPolicy counts as errors, are
// ended by Guard without a goroutine each.
type Session struct {
	id   int64
	done chan struct{}
}

// ID returns the session id, 0 for no session.
func (s *Session) ID() int64 { return s.id }

// Done returns a channel closed when the session is lost or the client
// closes.
func (s *Session) Done() <-chan struct{} { return s.done }

// noSession is the Session of a client without a live session.
var noSession = func() *Session {
	s := &Session{done: make(chan struct{})}
	close(s.done)
	return s
}()

// Session returns the live session; while there is none (after Lost until
// the next session, and after Close), a Session with ID 0 whose Done is
// closed.
func (c *Client) Session() *Session {
	if c == nil {
		return noSession
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess == nil {
		return noSession
	}
	return c.sess
}

// startSessionLocked makes sid the live session.
func (c *Client) startSessionLocked(sid int64) {
	c.endSessionLocked()
	c.session = sid
	c.sess = &Session{id: sid, done: make(chan struct{})}
}

// endSessionLocked ends the live session, if any.
func (c *Client) endSessionLocked() {
	c.session = 0
	if c.sess != nil {
		close(c.sess.done)
		c.sess = nil
	}
}

// guard is one Guard registration.
type guard struct {
	session int64
	f       func(closed bool, s connstate.State)
}

// Guard calls f once, when what the caller holds in session (a lock's node,
// say) must be given up: when the client enters a state its ErrorPolicy
// counts as an error (f gets closed false and the state), or when Close is
// called (closed true, before the session ends, so a holder hears of it
// before anyone else can be given its lock). If that has happened already
// (the session is not the live one, the state is an error, or the client
// is closed), f is called at once. f runs on the client's event goroutine,
// or Close's, with no lock held: it must not block, nor call Close. It
// costs no goroutine, so a client may guard any number of holds. stop
// unregisters f and reports whether it was still registered (so f has not
// run and will not).
func (c *Client) Guard(session int64, f func(closed bool, s connstate.State)) (stop func() bool) {
	if c == nil {
		f(true, 0)
		return func() bool { return false }
	}
	c.mu.Lock()
	switch {
	case c.closed:
		c.mu.Unlock()
		f(true, 0)
		return func() bool { return false }
	case session == 0 || session != c.session || c.opts.errorPolicy.IsError(c.state):
		st := c.state
		if session != c.session {
			st = connstate.Lost
		}
		c.mu.Unlock()
		f(false, st)
		return func() bool { return false }
	}
	if c.guards == nil {
		c.guards = make(map[uint64]guard)
	}
	c.guardSeq++
	id := c.guardSeq
	c.guards[id] = guard{session: session, f: f}
	c.mu.Unlock()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, ok := c.guards[id]
		delete(c.guards, id)
		return ok
	}
}

// tripGuardsLocked takes every guard off the registry for firing (after
// c.mu is released: see fireGuards) when s is an error under the policy.
func (c *Client) tripGuardsLocked(s connstate.State) {
	if !c.opts.errorPolicy.IsError(s) || len(c.guards) == 0 {
		return
	}
	for id, g := range c.guards {
		c.tripped = append(c.tripped, trippedGuard{g.f, s})
		delete(c.guards, id)
	}
}

type trippedGuard struct {
	f func(closed bool, s connstate.State)
	s connstate.State
}

// fireGuards calls the guards tripped by the events just handled, in the
// event goroutine, without c.mu.
func (c *Client) fireGuards() {
	c.mu.Lock()
	tripped := c.tripped
	c.tripped = nil
	c.mu.Unlock()
	for _, t := range tripped {
		t.f(false, t.s)
	}
}

// SessionAlive reports whether what a caller holds in session (a lock's
// node, say) may still be held, judged from the clock rather than from the
// events the client has handled so far: session is the live one, the
// client is not closed, and the client-side expiry deadline, counted from
// the last request a server answered (see WithSessionExpiryPercent), has
// not passed. After a process pause (SIGSTOP, a long GC pause) the
// watchdog's timer fires late; SessionAlive is right on the first call
// after the pause, and when it finds the deadline passed it has the
// watchdog run at once, so the client goes Lost and every Guard fires
// without waiting for the late timer. It does no I/O and never blocks on
// the network. A nil client has no session: false.
func (c *Client) SessionAlive(session int64) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || session == 0 || session != c.session {
		return false
	}
	if c.h == nil || c.h.wire == nil {
		return true // not yet connected: Connect has not returned
	}
	now := c.opts.clock.Now()
	deadline := sessionDeadline(now, c.h.wire.Acked(), c.negotiatedTimeoutLocked(), c.opts.expiryPercent)
	if now.Before(deadline) {
		return true
	}
	// The watchdog's work, on the event goroutine as always.
	c.events.Send(connEvent{gen: c.gen, expire: true})
	return false
}
