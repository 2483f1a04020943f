package retry

import "time"

// ErrorAware is implemented by policies whose decision depends on the error
// that made the attempt fail, such as [SessionFailed]. When a policy
// implements it, [Do] calls AllowRetryErr instead of AllowRetry, with the
// error the operation returned and the same retryCount and elapsed.
// AllowRetryErr must not block.
type ErrorAware interface {
	Policy
	AllowRetryErr(err error, retryCount int, elapsed time.Duration) (sleep time.Duration, ok bool)
}

// ask consults p the way Do does: with the error when p can use it.
func ask(p Policy, err error, retryCount int, elapsed time.Duration) (time.Duration, bool) {
	if ea, ok := p.(ErrorAware); ok {
		return ea.AllowRetryErr(err, retryCount, elapsed)
	}
	return p.AllowRetry(retryCount, elapsed)
}
