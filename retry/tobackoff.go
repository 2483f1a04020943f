package retry

import (
	"time"

	"github.com/cenkalti/backoff/v4"
)

// toBackOff adapts a Policy to backoff.BackOff.
type toBackOff struct {
	policy  Policy           // as given to ToBackOff
	cur     Policy           // the instance of policy for the current run
	now     func() time.Time // time.Now outside tests
	start   time.Time
	retries int
}

// ToBackOff returns a backoff.BackOff driven by p, for backoff.Retry and the
// rest of github.com/cenkalti/backoff/v4. It counts retries and measures
// elapsed time itself, from its creation or its last Reset: each
// NextBackOff asks p with that count and elapsed time, and returns p's sleep
// or backoff.Stop when p refuses. Reset starts over with a fresh count,
// clock and, for [FromBackOff] policies, a fresh BackOff.
//
// The BackOff knows no errors and no context: [ErrorAware] policies are
// asked through AllowRetry, and it shares no budget with [Do]. A nil or
// invalid p stops at once. Like the BackOffs of that package, the result is
// not safe for concurrent use; NextBackOff does not block.
func ToBackOff(p Policy) backoff.BackOff {
	return newToBackOff(p, time.Now)
}

func newToBackOff(p Policy, now func() time.Time) *toBackOff {
	b := &toBackOff{policy: p, now: now}
	b.Reset()
	return b
}

// Reset starts a new run.
func (b *toBackOff) Reset() {
	b.cur = nil
	if Validate(b.policy) == nil {
		b.cur = begin(b.policy)
	}
	b.start = b.now()
	b.retries = 0
}

// NextBackOff asks the policy about the next retry.
func (b *toBackOff) NextBackOff() time.Duration {
	if Validate(b.cur) != nil {
		return backoff.Stop
	}
	d, ok := b.cur.AllowRetry(b.retries, b.now().Sub(b.start))
	if !ok {
		return backoff.Stop
	}
	b.retries++
	return max(d, 0)
}
