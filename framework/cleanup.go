package framework

import (
	"context"
	"time"

	"github.com/gocurator/curator/retry"
)

const (
	// cleanupTimeout bounds clean-up in the foreground while the caller's
	// ctx is live; past it, the clean-up goes on in the background.
	cleanupTimeout = 5 * time.Second
	// cleanupGrace bounds clean-up in the foreground after the caller's
	// ctx ended: one request on a live connection, a round trip.
	cleanupGrace = time.Second
)

// CleanupContext returns the context for the clean-up after a failed or
// cancelled call (a guaranteed delete of the node it made, say), with a
// retry budget of its own (ctx's may be spent). Clean-up runs in the
// foreground only while it is quick, so that nothing is left when the call
// returns without the caller's deadline being stretched by more than a
// round trip:
//   - not connected: a context that has ended already, so the clean-up goes
//     to the background at once (guaranteed deletes do) and the call
//     returns at its deadline;
//   - ctx live: ctx's deadline and cancellation, and at most 5s;
//   - ctx ended (the usual reason for the failure): detached from ctx, at
//     most one second.
func (c *Client) CleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if c == nil {
		ended, cancel := context.WithCancel(context.Background())
		cancel()
		return ended, cancel
	}
	switch {
	case c.isClosed() || !c.State().IsConnected():
		ended, cancel := context.WithCancel(context.Background())
		cancel()
		return ended, cancel
	case ctx.Err() == nil:
		return context.WithTimeout(retry.WithNewBudget(ctx), cleanupTimeout)
	default:
		return context.WithTimeout(retry.WithNewBudget(context.WithoutCancel(ctx)), cleanupGrace)
	}
}
