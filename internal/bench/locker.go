package bench

import "context"

// Locker is what a workload gives the loop for one worker: Acquire blocks
// until the lock (or lease) is held, Release gives it back. The loop calls
// them alternately from the worker's goroutine only, so a Locker may keep
// the current lease in a closure variable.
type Locker struct {
	Acquire func(ctx context.Context) error
	Release func(ctx context.Context) error
}
