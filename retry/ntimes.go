package retry

import "time"

// nTimes is NTimes and OneTime.
type nTimes struct {
	n     int
	sleep time.Duration
}

// NTimes returns Curator's RetryNTimes: it allows n retries (retryCount < n)
// and sleeps the same duration before each. NTimes(0, d) never retries. A
// negative n or sleep gives a policy that [Do] rejects with
// [ErrInvalidPolicy].
func NTimes(n int, sleep time.Duration) Policy {
	switch {
	case n < 0:
		return invalidf("NTimes: negative n %d", n)
	case sleep < 0:
		return invalidf("NTimes: negative sleep %v", sleep)
	}
	return nTimes{n: n, sleep: sleep}
}

// OneTime returns Curator's RetryOneTime: NTimes(1, sleep), a single retry
// after sleep. A negative sleep gives a policy that [Do] rejects with
// [ErrInvalidPolicy].
func OneTime(sleep time.Duration) Policy {
	if sleep < 0 {
		return invalidf("OneTime: negative sleep %v", sleep)
	}
	return NTimes(1, sleep)
}

// AllowRetry allows retryCount < n and always sleeps the same.
func (p nTimes) AllowRetry(retryCount int, _ time.Duration) (time.Duration, bool) {
	if retryCount >= p.n {
		return 0, false
	}
	return p.sleep, true
}
