package locking

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
)

// RevokeMessage is what Revoke writes into a holder's node (Curator's
// REVOKE_MESSAGE).
const RevokeMessage = "__REVOKE__"

// Revoke asks the holder of node to release by writing RevokeMessage into
// it. A missing node is not an error.
func Revoke(ctx context.Context, c *framework.Client, node string) error {
	if c == nil {
		return framework.ErrNilClient
	}
	_, err := c.Set(ctx, node, []byte(RevokeMessage), -1)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("revoke %s: %w", node, err)
	}
	return nil
}

// WatchRevocation calls fn, once, on a goroutine of its own, when
// RevokeMessage is written into h's node while h is held. The watch is a
// getData watch on our node; it goes when the node goes.
func WatchRevocation(h *Hold, fn func()) {
	go func() {
		for {
			select {
			case <-h.Done():
				return
			default:
			}
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				select {
				case <-h.Done():
				case <-ctx.Done():
				}
				cancel()
			}()
			data, _, ch, err := h.c.GetW(ctx, h.node)
			cancel()
			if err != nil {
				return
			}
			if string(data) == RevokeMessage {
				h.noteLoss(reasonRevoked)
				h.revoked.Store(true)
				fn()
				return
			}
			select {
			case ev := <-ch:
				if ev.Type == zk.EventNodeDeleted {
					// Deleted while still held: not by our Release,
					// which ends the hold first.
					h.noteLoss(reasonNodeDeleted)
					return
				}
			case <-h.Done():
				return
			}
		}
	}()
}
