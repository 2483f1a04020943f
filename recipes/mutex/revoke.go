package mutex

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locking"
)

// Revoke asks the holder of node (a lock node path, such as one from
// Participants) to release, by writing "__REVOKE__" (locking.RevokeMessage)
// into it, as Curator's Revoker does. Only a Revocable holder reacts. A
// node that is gone already is not an error.
func Revoke(ctx context.Context, c *framework.Client, node string) error {
	if c == nil {
		return framework.ErrNilClient
	}
	_, err := c.Set(ctx, node, []byte(locking.RevokeMessage), -1)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("revoke %s: %w", node, err)
	}
	return nil
}
