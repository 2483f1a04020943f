package framework

import (
	"context"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/retry"
)

// background runs task until it succeeds, fails with an error that retrying
// cannot mend, or the client closes. Between attempts it waits for the
// connection (with a capped backoff), so a task queued while disconnected
// runs as soon as the connection is back.
func (c *Client) background(task func(ctx context.Context, conn *zk.Conn) error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.wg.Add(1)
	c.mu.Unlock()
	c.tel.BackgroundStarted()
	go func() {
		defer c.wg.Done()
		defer c.tel.BackgroundEnded()
		pause := retry.Pause{Base: 50 * time.Millisecond, Max: time.Second}
		for {
			if err := c.BlockUntilConnected(c.ctx); err != nil {
				return
			}
			conn, err := c.current(c.ctx)
			if err != nil {
				if !c.isClosed() {
					c.log.Error("background operation dropped", zap.Error(err))
				}
				return
			}
			err = c.sendable(c.ctx, conn)
			if err == nil {
				err = connectionLoss(task(c.ctx, conn))
			}
			if err == nil {
				return
			}
			if !retry.IsRetryable(err) {
				c.log.Warn("background operation failed", zap.Error(err))
				return
			}
			c.log.Debug("background operation will retry", zap.Error(err))
			if pause.Wait(c.ctx) != nil {
				return
			}
		}
	}()
}
