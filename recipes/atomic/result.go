package atomic

import "time"

// Result is the outcome of an update, Curator's AtomicValue: whether it
// happened, the value before and after, and what it took.
type Result[T any] struct {
	// Succeeded reports whether the update was applied.
	Succeeded bool
	// PreValue is the value the update was computed from (the last one
	// read when it did not succeed).
	PreValue T
	// PostValue is the value written; meaningful only if Succeeded.
	PostValue T
	// Stats counts the tries.
	Stats Stats
}

// Stats is Curator's AtomicStats: the tries an update took.
type Stats struct {
	// OptimisticTries counts the tries made without the lock.
	OptimisticTries int
	// PromotedTries counts the tries made holding the promoted lock.
	PromotedTries int
	// OptimisticTime is the time spent in the optimistic tries.
	OptimisticTime time.Duration
	// PromotedTime is the time spent promoted, waiting for the lock
	// included.
	PromotedTime time.Duration
}
