package framework

import (
	"context"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/internal/telemetry/clienttel"
	"github.com/gocurator/curator/internal/zkwire"
)

// Sync waits until the server this client is connected to has applied
// every write the leader had committed when the request reached it (the
// leader's state as of Sync is visible to the reads that follow). A read
// after Sync sees every write that completed, anywhere, before Sync was
// called. path names the node the server is asked to sync for (ZooKeeper
// syncs the whole tree; the path is checked and namespaced like any
// other). Sync runs under the retry policy; when ctx ends it returns ctx's
// error, and the sync may still complete on the server. It leaves nothing
// behind.
func (c *Client) Sync(ctx context.Context, path string) error {
	if c == nil {
		return ErrNilClient
	}
	if err := ValidatePath(path); err != nil {
		return err
	}
	if err := c.checkSize("sync", zkwire.ReadSize(c.full(path)), 0); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	err := c.do(ctx, clienttel.OpSync, func(conn *zk.Conn) error {
		_, err := conn.Sync(c.full(path))
		return err
	})
	if err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}
