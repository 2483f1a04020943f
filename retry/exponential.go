package retry

import (
	"math"
	"math/rand/v2"
	"time"
)

// MaxExponentialRetries is the most retries [ExponentialBackoff] and
// [BoundedExponentialBackoff] allow; larger maxRetries are clamped to it.
// Curator has the same cap: past it the random range 2^(retryCount+1) no
// longer fits a 32-bit int, and the sleeps are absurdly long before that.
const MaxExponentialRetries = 29

// exponential is ExponentialBackoff, and BoundedExponentialBackoff when
// maxSleep is below math.MaxInt64.
type exponential struct {
	base       time.Duration
	maxSleep   time.Duration
	maxRetries int
	// rand returns a uniform value in [0, n); tests make it deterministic.
	rand func(n int64) int64
}

// ExponentialBackoff returns Curator's ExponentialBackoffRetry: it allows
// maxRetries retries, and before retry number retryCount (0 for the first)
// sleeps base times a random whole number drawn uniformly from
// [0, 2^(retryCount+1)), or base times 1 when the draw is 0. The expected
// sleep thus roughly doubles with every retry. The product saturates at the
// largest time.Duration instead of overflowing.
//
// maxRetries above [MaxExponentialRetries] is clamped to it. A negative base
// or maxRetries gives a policy that [Do] rejects with [ErrInvalidPolicy].
func ExponentialBackoff(base time.Duration, maxRetries int) Policy {
	return newExponential("ExponentialBackoff", base, math.MaxInt64, maxRetries)
}

// BoundedExponentialBackoff is [ExponentialBackoff] with every sleep capped
// at maxSleep, like Curator's BoundedExponentialBackoffRetry. maxRetries
// above [MaxExponentialRetries] is clamped to it. A negative base, maxSleep
// or maxRetries gives a policy that [Do] rejects with [ErrInvalidPolicy].
func BoundedExponentialBackoff(base, maxSleep time.Duration, maxRetries int) Policy {
	if maxSleep < 0 {
		return invalidf("BoundedExponentialBackoff: negative maxSleep %v", maxSleep)
	}
	return newExponential("BoundedExponentialBackoff", base, maxSleep, maxRetries)
}

func newExponential(name string, base, maxSleep time.Duration, maxRetries int) Policy {
	switch {
	case base < 0:
		return invalidf("%s: negative base %v", name, base)
	case maxRetries < 0:
		return invalidf("%s: negative maxRetries %d", name, maxRetries)
	}
	return exponential{
		base:       base,
		maxSleep:   maxSleep,
		maxRetries: min(maxRetries, MaxExponentialRetries),
		rand:       rand.Int64N,
	}
}

// AllowRetry allows retryCount < maxRetries; a negative retryCount counts as 0.
func (e exponential) AllowRetry(retryCount int, _ time.Duration) (time.Duration, bool) {
	retryCount = max(retryCount, 0)
	if retryCount >= e.maxRetries {
		return 0, false
	}
	factor := max(1, e.rand(int64(1)<<(retryCount+1)))
	return min(saturatingMul(e.base, factor), e.maxSleep), true
}

// saturatingMul returns d*n for n >= 1, or the largest Duration when that
// overflows.
func saturatingMul(d time.Duration, n int64) time.Duration {
	if d > 0 && n > math.MaxInt64/int64(d) {
		return math.MaxInt64
	}
	return d * time.Duration(n)
}
