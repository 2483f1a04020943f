package locking

import (
	"context"

	"github.com/go-zookeeper/zk"
)

// RevokeMessage is what a revoker (mutex.Revoke) writes into a holder's
// node to ask it to release (Curator's REVOKE_MESSAGE). Helper.
const RevokeMessage = "__REVOKE__"

// WatchRevocation calls fn, once, on a goroutine of its own, when
// RevokeMessage is written into h's node while h is held. The watch is a
// getData watch on our node; it goes when the node goes.
//
// It stays a one-shot GetW, not framework.Watch, as the leader term's
// watch of its node does: on Watch a revocable hold would cost AddWatch,
// a read and RemoveWatches instead of one GetW, and two server watch
// entries instead of one. Measured on ZooKeeper 3.8 (cons, mntr
// zk_watch_count), a revocable mutex.Acquire and Release: 3 and 1
// requests with one watch entry; on Watch 4 and 2 with two.
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
