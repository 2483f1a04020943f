package retry

import (
	"errors"
	"fmt"
	"time"
)

// ErrInvalidPolicy is wrapped by the error of a policy built from bad
// arguments (a negative duration or count, a nil policy or factory). [Do]
// returns it without calling the operation; [Validate] reports it earlier.
var ErrInvalidPolicy = errors.New("retry: invalid policy")

// invalidPolicy stands in for a policy whose constructor got bad arguments.
// The constructors' signatures are fixed, so the error travels inside the
// policy until Do or Validate reports it.
type invalidPolicy struct {
	err error
}

func invalidf(format string, args ...any) Policy {
	return invalidPolicy{err: fmt.Errorf("%w: %s", ErrInvalidPolicy, fmt.Sprintf(format, args...))}
}

// AllowRetry refuses: an invalid policy never retries, even outside Do.
func (invalidPolicy) AllowRetry(int, time.Duration) (time.Duration, bool) { return 0, false }

func (p invalidPolicy) validate() error { return p.err }
