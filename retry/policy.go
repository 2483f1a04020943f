package retry

import "time"

// Policy decides whether a failed operation is tried again.
//
// AllowRetry is asked after each retryable failure. retryCount is the
// number of retries already made, so it is 0 for the first retry; elapsed
// is the time since the first attempt began. It returns how long to sleep
// before the next attempt and whether to make one at all.
//
// Do asks policies while holding the lock of the shared retry budget, so
// AllowRetry must return promptly and must not block. It must be safe for
// concurrent use.
type Policy interface {
	AllowRetry(retryCount int, elapsed time.Duration) (sleep time.Duration, ok bool)
}
