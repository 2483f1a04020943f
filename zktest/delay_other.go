//go:build !linux

package zktest

// newClock returns Go's timers: a chunk may leave up to about a
// millisecond after its due time.
func newClock() clock { return newTimerClock() }
