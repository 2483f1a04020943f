//go:build !linux

package zktest

import "time"

// preciseSleep is nil outside Linux: the delay line waits with Go's
// timers, which may release a chunk up to about a millisecond late.
var preciseSleep func(time.Duration)
