package framework

import (
	"context"
	"time"
)

// Pause waits d, the pause between a recipe's attempts, or until ctx ends
// (its error) or the client closes (ErrClosed); a d of zero or less returns
// nil at once. A nil client's Pause returns ErrNilClient.
func (c *Client) Pause(ctx context.Context, d time.Duration) error {
	if c == nil {
		return ErrNilClient
	}
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.Done():
		return ErrClosed
	}
}
