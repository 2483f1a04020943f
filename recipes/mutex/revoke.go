package mutex

import (
	"context"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locking"
)

// Revoke asks the holder of node (a lock node path, such as one from
// Participants) to release, by writing "__REVOKE__" into it, as Curator's
// Revoker does. Only a Revocable holder reacts. A node that is gone already
// is not an error.
func Revoke(ctx context.Context, c *framework.Client, node string) error {
	return locking.Revoke(ctx, c, node)
}
