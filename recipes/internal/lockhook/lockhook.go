// Package lockhook is what the lock loop (recipes/locking) tells one
// acquire's caller beyond the hold, through the acquire's context: when
// its node is queued, and how to count a local hand-over of its hold; and
// what the caller asks of the loop: to make the acquire's first node
// itself, and to end a hold without deleting its node. The cohort of
// recipes/internal/reentrant needs them all; recipe authors need none, so
// they are not part of the loop's API.
package lockhook

import (
	"context"

	"github.com/gocurator/curator/framework"
)

// Hooks is one acquire's; every field is optional.
type Hooks struct {
	// Queued, set by the caller, is called on the acquiring goroutine
	// each time the acquire has created a node (so holds a place in the
	// ZooKeeper queue), before it waits.
	Queued func()
	// Create, set by the caller, makes the acquire's first node instead
	// of the loop's protected create: path is where the loop would create
	// it (the protected id still to be put before its name), data and
	// mode the driver's. It returns the node's path, or "" and a nil
	// error to let the loop create as usual; on an error the loop fails
	// the acquire, and a node that Create returned with it is deleted. A
	// node it returns is the loop's as if the loop had made it: the loop
	// reads its Stat and the directory's listing (one round trip) and
	// waits. Create never leaves behind a node it does not return. The
	// cohort's next node at the end of a streak is created this way, in
	// one transaction with the delete of the node it replaces.
	Create func(ctx context.Context, path string, data []byte, mode framework.Mode) (string, error)
	// HandedOver is set by the loop when the acquire returns a hold: it
	// counts a hand-over of that hold from one local holder to the next
	// in the lock's telemetry, as the loop counts its own.
	HandedOver func(ctx context.Context)
	// Detach is set by the loop when the acquire returns a hold: it ends
	// the hold as its Release does but deletes nothing, and returns the
	// nodes Release would delete, the hold's own first; the caller
	// deletes them (guaranteed). After a loss it returns the loss, after
	// a release ErrNotHeld, and no nodes.
	Detach func() ([]string, error)
}

type key struct{}

// With returns ctx carrying h.
func With(ctx context.Context, h *Hooks) context.Context { return context.WithValue(ctx, key{}, h) }

// From returns the hooks ctx carries, nil if none.
func From(ctx context.Context) *Hooks {
	h, _ := ctx.Value(key{}).(*Hooks)
	return h
}
