package framework

import (
	"context"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/retry"
)

// WithCircuitBreaking puts every listener of the client (Listen, and so
// every recipe's) behind a connstate.CircuitBreaker under p, as Curator's
// connectionStateListenerManagerFactory(circuitBreaking(policy)) does: a
// connection that flaps between Suspended and Reconnected reaches each
// listener as one Suspended, then, once p's sleep passes on a connected
// state, one Reconnected; Lost always gets through. Client.State and the
// client's own handling of the session are not damped. p must not be nil
// nor invalid (see retry.Validate); retry.UntilElapsed or
// retry.NTimes are the usual choices.
func WithCircuitBreaking(p retry.Policy) Option {
	return func(o *options) error {
		if p == nil {
			return invalid("nil circuit-breaking policy")
		}
		if err := retry.Validate(p); err != nil {
			return invalid("circuit-breaking policy: %w", err)
		}
		o.circuit = p
		return nil
	}
}

// addListener adds fn to the client's listeners, behind its own circuit
// breaker when the client has WithCircuitBreaking. The breaker's timer
// stops when the listener is cancelled or the client closes.
func (c *Client) addListener(fn func(connstate.State)) (cancel func()) {
	p := c.opts.circuit
	if p == nil {
		return c.listeners.Add(fn)
	}
	b := connstate.NewCircuitBreaker(fn, p)
	remove := c.listeners.Add(b.Handle)
	stop := context.AfterFunc(c.ctx, b.Close)
	return func() {
		remove()
		stop()
		b.Close()
	}
}
