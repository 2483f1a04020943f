package retry

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// loop is Do with its clock and sleeper; tests swap them for fakes.
type loop struct {
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
}

var realLoop = loop{now: time.Now, sleep: sleepCtx}

// errNilOp is returned by Do for a nil op.
var errNilOp = errors.New("retry: nil op")

// Do calls op until it returns nil, returns an error that [IsRetryable]
// rejects, p refuses another retry, or ctx ends. Between attempts Do blocks
// for the sleep p asks for; the end of ctx cuts the sleep short. Do starts
// no goroutines and never runs op concurrently with itself.
//
// Do returns:
//   - nil when op succeeds;
//   - op's error unchanged when it is not retryable;
//   - when p refuses, the last error wrapped as
//     "retry: gave up after N retries: ...", where N counts every retry
//     charged to the shared budget;
//   - when ctx ends after a retryable failure, typically during the sleep,
//     an error that wraps both ctx.Err() and the last op error, so
//     errors.Is matches either;
//   - ctx.Err() itself, without calling op, when ctx is done before the
//     first attempt;
//   - an error wrapping [ErrInvalidPolicy], without calling op, when p is
//     nil or invalid (see [Validate]), and an error too for a nil op.
//
// p is asked through [ErrorAware] when it implements it. op receives a
// context derived from ctx that carries the retry budget: a Do called with
// it, or with a context derived from it, shares the budget (see the package
// documentation and [WithNewBudget]). op should honour that context.
func Do(ctx context.Context, p Policy, op func(ctx context.Context) error) error {
	return realLoop.do(ctx, p, op)
}

func (l loop) do(ctx context.Context, p Policy, op func(ctx context.Context) error) error {
	if err := Validate(p); err != nil {
		return err
	}
	p = begin(p)
	if err := Validate(p); err != nil {
		return err
	}
	if op == nil {
		return errNilOp
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	f := enter(ctx, p, l.now())
	opCtx := context.WithValue(ctx, budgetKey{}, f)
	for {
		err := op(opCtx)
		if err == nil || !IsRetryable(err) {
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return interrupted(cerr, err)
		}
		d, n, ok := f.allow(err, l.now())
		if !ok {
			return fmt.Errorf("retry: gave up after %d retries: %w", n, err)
		}
		if serr := l.sleep(ctx, d); serr != nil {
			return interrupted(serr, err)
		}
		// A timer and a cancellation can be ready together; honour the cancellation.
		if cerr := ctx.Err(); cerr != nil {
			return interrupted(cerr, err)
		}
	}
}

// interrupted wraps both the reason the wait ended and the last op error.
func interrupted(cause, last error) error {
	return fmt.Errorf("retry: %w while waiting to retry: %w", cause, last)
}

// sleepCtx blocks for d or until ctx ends, whichever comes first, and
// returns ctx.Err() in the latter case. A done ctx wins even when d <= 0.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil || d <= 0 {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
