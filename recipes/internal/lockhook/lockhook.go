// Package lockhook is what the lock loop (recipes/locking) tells one
// acquire's caller beyond the hold, through the acquire's context: when
// its node is queued, and how to count a local hand-over of its hold. The
// cohort of recipes/internal/reentrant needs both; recipe authors need
// neither, so they are not part of the loop's API.
package lockhook

import "context"

// Hooks is one acquire's; every field is optional.
type Hooks struct {
	// Queued, set by the caller, is called on the acquiring goroutine
	// each time the acquire has created a node (so holds a place in the
	// ZooKeeper queue), before it waits.
	Queued func()
	// HandedOver is set by the loop when the acquire returns a hold: it
	// counts a hand-over of that hold from one local holder to the next
	// in the lock's telemetry, as the loop counts its own.
	HandedOver func(ctx context.Context)
}

type key struct{}

// With returns ctx carrying h.
func With(ctx context.Context, h *Hooks) context.Context { return context.WithValue(ctx, key{}, h) }

// From returns the hooks ctx carries, nil if none.
func From(ctx context.Context) *Hooks {
	h, _ := ctx.Value(key{}).(*Hooks)
	return h
}
