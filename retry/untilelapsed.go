package retry

import "time"

type untilElapsed struct {
	maxElapsed time.Duration
	sleep      time.Duration
}

// UntilElapsed returns Curator's RetryUntilElapsed: it retries, sleeping the
// same duration each time, as long as the time elapsed since the first
// attempt is below maxElapsed. The check uses the elapsed time when the
// policy is asked, before the sleep, so the last retry may start up to one
// sleep after maxElapsed; pair it with a ctx deadline for a hard limit.
// UntilElapsed(0, d) never retries. A negative maxElapsed or sleep gives a
// policy that [Do] rejects with [ErrInvalidPolicy].
func UntilElapsed(maxElapsed, sleep time.Duration) Policy {
	switch {
	case maxElapsed < 0:
		return invalidf("UntilElapsed: negative maxElapsed %v", maxElapsed)
	case sleep < 0:
		return invalidf("UntilElapsed: negative sleep %v", sleep)
	}
	return untilElapsed{maxElapsed: maxElapsed, sleep: sleep}
}

// AllowRetry allows elapsed < maxElapsed, whatever the retry count.
func (p untilElapsed) AllowRetry(_ int, elapsed time.Duration) (time.Duration, bool) {
	if elapsed >= p.maxElapsed {
		return 0, false
	}
	return p.sleep, true
}
