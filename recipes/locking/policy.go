package locking

import (
	"sync"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
)

// WithErrorPolicy makes the holds this loop grants end on the states p
// counts as errors, instead of those of the client's ErrorPolicy (a recipe
// option such as leader.WithErrorPolicy). Such a hold costs a state
// listener and a goroutine (holds under the client's policy cost neither),
// and it ends on the client's Close from that goroutine, just after Close
// began rather than before it returns. A nil p keeps the client's policy.
func WithErrorPolicy(p connstate.ErrorPolicy) Option {
	return func(l *Loop) { l.policy = p }
}

// newPolicyHold is newHold for a hold that ends on the states p counts as
// errors rather than on the client's ErrorPolicy's: on such a state, when
// the node's session ends (at once if it has), and on Close.
func newPolicyHold(c *framework.Client, node string, stat *zk.Stat, log *zap.Logger, p connstate.ErrorPolicy) *Hold {
	h := &Hold{c: c, log: log, node: node, czxid: stat.Czxid, session: stat.EphemeralOwner}
	sess := c.Session()
	stopped := make(chan struct{})
	var once sync.Once
	// The listener is registered before the state is read, so no error
	// state goes unseen between the two.
	cancelListen := c.Listen(func(s connstate.State) {
		if p.IsError(s) {
			h.end(ErrLockLost, s, s.String(), true)
		}
	})
	stop := func() bool {
		first := false
		once.Do(func() {
			first = true
			cancelListen()
			close(stopped)
		})
		return first
	}
	h.mu.Lock()
	h.cancel = stop
	ended := h.err != nil // by the listener, before cancel was set
	h.mu.Unlock()
	if ended {
		stop()
	}
	go func() {
		select {
		case <-stopped:
		case <-c.Done():
			h.end(framework.ErrClosed, 0, "client closed", false)
		case <-sess.Done():
			select {
			case <-c.Done():
				h.end(framework.ErrClosed, 0, "client closed", false)
			default:
				h.end(ErrLockLost, connstate.Lost, connstate.Lost.String(), true)
			}
		}
	}()
	if sess.ID() != stat.EphemeralOwner {
		h.end(ErrLockLost, connstate.Lost, connstate.Lost.String(), true)
	} else if s := c.State(); p.IsError(s) {
		h.end(ErrLockLost, s, s.String(), true)
	}
	return h
}
