package bench

import (
	"context"
	"time"
)

// Locker is what a workload gives the loop for one worker: Acquire blocks
// until the lock (or lease) is held, Release gives it back. The loop calls
// them alternately from the worker's goroutine only, so a Locker may keep
// the current lease in a closure variable.
type Locker struct {
	Acquire func(ctx context.Context) error
	Release func(ctx context.Context) error
	// Latency, if set, is called after each Acquire that succeeded and
	// gives the latency to record for it in place of the call's own time;
	// 0 keeps the call's. The election measures its fail-over this way:
	// from the leader's Resign call to the next leader's Campaign return.
	Latency func() time.Duration
}
