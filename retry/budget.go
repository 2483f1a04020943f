package retry

import (
	"context"
	"sync"
	"time"
)

// budget is the retry allowance of one public call: the Do that created it
// and every Do nested in its op charge their retries here, so nested loops
// add up instead of multiplying (CURATOR-559).
type budget struct {
	mu      sync.Mutex
	start   time.Time // when the outermost Do began
	retries int       // retries taken at any level
}

// budgetKey is the context key of the innermost *frame.
type budgetKey struct{}

// WithNewBudget returns a context derived from ctx in which the next [Do]
// starts a retry budget of its own instead of sharing the one of an
// enclosing Do. Use it for work that outlives the call that started it, such
// as a delete retried in the background on context.WithoutCancel(ctx): the
// enclosing call's budget may be spent by then. It does not block and keeps
// ctx's deadline, cancellation and other values.
func WithNewBudget(ctx context.Context) context.Context {
	return context.WithValue(ctx, budgetKey{}, (*frame)(nil))
}
