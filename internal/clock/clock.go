// Package clock is the time source of the client's timers: the client-side
// session expiry (framework) and the circuit breaker (connstate). Real is
// the wall clock; Fake, for tests, moves only when told to and fires the
// timers that fall due synchronously, so a test of a timer is a sequence of
// steps rather than a race against a short window.
package clock

import "time"

// Clock tells the time and runs functions later.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f, on a goroutine of its own for Real and on the
	// goroutine of Fake.Advance for Fake, once d has passed.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc.
type Timer interface {
	// Stop prevents the call if it has not started, and reports whether
	// it did so.
	Stop() bool
}

// Real is the wall clock of package time.
var Real Clock = realClock{}

type realClock struct{}

func (realClock) Now() time.Time                            { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
