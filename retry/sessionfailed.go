package retry

import (
	"errors"
	"time"

	"github.com/go-zookeeper/zk"
)

type sessionFailed struct {
	inner Policy
}

// SessionFailed returns Curator's SessionFailedRetryPolicy: it never retries
// after zk.ErrSessionExpired, and defers to p for every other error. Seeing
// the error takes [ErrorAware], which [Do] uses; asked through AllowRetry
// alone, as [ToBackOff] does, it can only defer to p. A nil p gives a policy
// that [Do] rejects with [ErrInvalidPolicy].
func SessionFailed(p Policy) Policy {
	if p == nil {
		return invalidf("SessionFailed: nil policy")
	}
	return sessionFailed{inner: p}
}

// AllowRetry defers to the wrapped policy: without the error, expiry cannot
// be told apart.
func (s sessionFailed) AllowRetry(retryCount int, elapsed time.Duration) (time.Duration, bool) {
	return s.inner.AllowRetry(retryCount, elapsed)
}

// AllowRetryErr refuses session expiry and defers to the wrapped policy
// otherwise.
func (s sessionFailed) AllowRetryErr(err error, retryCount int, elapsed time.Duration) (time.Duration, bool) {
	if errors.Is(err, zk.ErrSessionExpired) {
		return 0, false
	}
	return ask(s.inner, err, retryCount, elapsed)
}

func (s sessionFailed) validate() error { return Validate(s.inner) }

func (s sessionFailed) start() Policy { return sessionFailed{inner: begin(s.inner)} }
