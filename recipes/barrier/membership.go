package barrier

import (
	"context"
	"fmt"
	"sync"

	"go.uber.org/zap"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
)

// membership is what an entered Double holds: its node in the round, until
// Leave or until the connection ends it (docs/handles.md: Done and Err
// where something is held).
type membership struct {
	mu      sync.Mutex
	done    chan struct{} // closed when the membership ends; nil: never entered
	err     error         // nil while entered
	session int64         // the member node's session
	node    string        // the member node's path (a later Enter's differs)
	stop    func() bool   // unregisters the client's guard
}

// start begins a membership in session, guarded by the client: a state the
// client's ErrorPolicy counts as an error, the session's end (at once if it
// ended already) or Close ends it.
func (d *Double) start(session int64, node string) {
	m := &d.member
	m.mu.Lock()
	m.done, m.err, m.session, m.node, m.stop = make(chan struct{}), nil, session, node, nil
	done := m.done
	m.mu.Unlock()
	stop := d.c.Guard(session, func(closed bool, s connstate.State) {
		if closed {
			d.end(done, framework.ErrClosed, false)
			return
		}
		d.end(done, fmt.Errorf("%w: connection %s", ErrMemberLost, s), true)
	})
	m.mu.Lock()
	if m.done == done && m.err == nil {
		m.stop = stop
		m.mu.Unlock()
		return
	}
	m.mu.Unlock()
	stop()
}

// end ends the membership whose channel is done with err, unless it ended
// already; with del it deletes the member node in the background (the
// member is no longer in the round, so nobody should count it or wait for
// it). It never blocks: the client's event goroutine calls it.
func (d *Double) end(done chan struct{}, err error, del bool) {
	m := &d.member
	m.mu.Lock()
	if m.done != done || m.err != nil {
		m.mu.Unlock()
		return
	}
	m.err = err
	close(done)
	stop, node := m.stop, m.node
	m.stop = nil
	m.mu.Unlock()
	if stop != nil {
		stop()
	}
	if !del {
		return
	}
	d.log.Info("double barrier membership lost", zap.Error(err))
	// Guaranteed: a done context sends the delete to the background at
	// once, where it keeps trying until it succeeds or the client closes.
	bg, cancel := context.WithCancel(context.Background())
	cancel()
	_ = d.c.Delete(bg, node, framework.Guaranteed(), framework.Quietly())
}

// live ends the membership if its session can no longer be alive by the
// clock (after a process pause the client's own timer fires late), and
// returns its channel and error.
func (d *Double) live() (chan struct{}, error) {
	m := &d.member
	m.mu.Lock()
	done, err, session := m.done, m.err, m.session
	m.mu.Unlock()
	if done == nil {
		return nil, ErrNotEntered
	}
	if err == nil && !d.c.SessionAlive(session) {
		d.end(done, fmt.Errorf("%w: session expired (the client-side deadline passed)", ErrMemberLost), true)
		m.mu.Lock()
		err = m.err
		m.mu.Unlock()
	}
	return done, err
}

// closedChan is Done's channel when nothing is held.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Done returns a channel closed when the member's place in the round ends:
// Leave was called, the client's ErrorPolicy counted a connection state as
// an error or the session ended (then the member node is deleted, so that
// the other members neither count this one nor wait for it), or the client
// was closed. It is closed when the handle is not entered. Like a lock's
// hold, it judges the session by the clock: the first look after a process
// pause past the session's expiry finds it closed.
func (d *Double) Done() <-chan struct{} {
	if d == nil || d.err != nil {
		return closedChan
	}
	done, _ := d.live()
	if done == nil {
		return closedChan
	}
	return done
}

// Err returns nil while the member is entered, an error wrapping
// ErrMemberLost once its place was lost with the connection,
// framework.ErrClosed once the client was closed, and ErrNotEntered before
// Enter and after Leave.
func (d *Double) Err() error {
	if d == nil {
		return ErrNilHandle
	}
	if d.err != nil {
		return d.err
	}
	_, err := d.live()
	return err
}

// release ends the membership as Leave begins (Err is ErrNotEntered from
// then on), and returns what had ended it already, if anything did: Leave
// reports that loss after it has left.
func (d *Double) release() error {
	m := &d.member
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.done == nil {
		return nil
	}
	lost := m.err
	if lost == nil && !d.c.SessionAlive(m.session) {
		lost = fmt.Errorf("%w: session expired (the client-side deadline passed)", ErrMemberLost)
	}
	if m.err == nil {
		close(m.done)
	}
	m.err = ErrNotEntered
	if m.stop != nil {
		// Guard's stop does not call back into the membership: safe
		// under its lock.
		m.stop()
		m.stop = nil
	}
	return lost
}
