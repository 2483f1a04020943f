package retry

import "time"

type forever struct {
	interval time.Duration
}

// Forever returns Curator's RetryForever: it always retries, sleeping
// interval before each retry. Only the ctx given to [Do] ends the loop, so
// give Do a ctx that can end. A negative interval gives a policy that [Do]
// rejects with [ErrInvalidPolicy].
func Forever(interval time.Duration) Policy {
	if interval < 0 {
		return invalidf("Forever: negative interval %v", interval)
	}
	return forever{interval: interval}
}

// AllowRetry always allows.
func (p forever) AllowRetry(int, time.Duration) (time.Duration, bool) {
	return p.interval, true
}
