package retry

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-zookeeper/zk"
)

// nested runs an inner Do of inner inside an outer Do of outer, with an
// inner op that always fails with connection loss, and returns how often
// the inner op ran. wrap may replace the ctx the inner Do gets.
func nested(t *testing.T, outer, inner Policy, wrap func(context.Context) context.Context) (int, error) {
	t.Helper()
	l := newFakeClock().loop()
	var attempts atomic.Int32
	err := l.do(context.Background(), outer, func(ctx context.Context) error {
		return l.do(wrap(ctx), inner, func(context.Context) error {
			attempts.Add(1)
			return zk.ErrConnectionClosed
		})
	})
	return int(attempts.Load()), err
}

type testKey struct{}

func derived(ctx context.Context) context.Context {
	return context.WithValue(ctx, testKey{}, "derived")
}

func TestNestedDoSharesOneBudget(t *testing.T) {
	same := func(ctx context.Context) context.Context { return ctx }
	tests := []struct {
		name         string
		outer, inner Policy
		wrap         func(context.Context) context.Context
		wantAttempts int
		wantMsg      string
	}{
		{
			// CURATOR-559: 3 retries around 3 retries must not be 16 attempts.
			name: "nested retries add up instead of multiplying", outer: NTimes(3, ms), inner: NTimes(3, ms), wrap: same,
			wantAttempts: 4,
			wantMsg:      "retry: gave up after 3 retries: retry: gave up after 3 retries: zk: connection closed",
		},
		{
			name: "a ctx derived from op's ctx shares the budget", outer: NTimes(3, ms), inner: NTimes(3, ms), wrap: derived,
			wantAttempts: 4,
		},
		{
			name: "a narrower inner policy leaves the rest to the outer one", outer: NTimes(3, ms), inner: OneTime(ms), wrap: same,
			wantAttempts: 4,
		},
		{
			name: "an outer policy caps a generous inner one", outer: NTimes(2, ms), inner: Forever(ms), wrap: same,
			wantAttempts: 3,
		},
		{
			name: "WithNewBudget starts a separate budget", outer: NTimes(3, ms), inner: NTimes(3, ms), wrap: WithNewBudget,
			wantAttempts: 16,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := nested(t, tt.outer, tt.inner, tt.wrap)
			if got != tt.wantAttempts {
				t.Errorf("inner op ran %d times, want %d", got, tt.wantAttempts)
			}
			if !errors.Is(err, zk.ErrConnectionClosed) {
				t.Errorf("err = %v, want connection loss", err)
			}
			if tt.wantMsg != "" && err.Error() != tt.wantMsg {
				t.Errorf("err = %q, want %q", err, tt.wantMsg)
			}
		})
	}
}

func TestNestedDoMeasuresElapsedFromTheOutermostStart(t *testing.T) {
	clock := newFakeClock()
	l := clock.loop()
	rec := &recorder{inner: NTimes(1, 10*ms)}
	_ = l.do(context.Background(), NTimes(1, 0), func(ctx context.Context) error {
		clock.advance(50 * ms)
		return l.do(ctx, rec, func(context.Context) error { return zk.ErrConnectionClosed })
	})
	if want := []query{{0, 50 * ms}, {1, 60 * ms}}; !slices.Equal(rec.queries(), want) {
		t.Errorf("inner policy asked %v, want %v", rec.queries(), want)
	}
}

func TestSequentialNestedDoShareTheBudget(t *testing.T) {
	l := newFakeClock().loop()
	first, firstAttempts := scriptedOp(nil, 0, zk.ErrConnectionClosed, zk.ErrConnectionClosed, nil)
	second, secondAttempts := scriptedOp(nil, 0, zk.ErrConnectionClosed)
	err := l.do(context.Background(), NTimes(3, ms), func(ctx context.Context) error {
		if err := l.do(ctx, NTimes(3, ms), first); err != nil {
			return err
		}
		return l.do(ctx, NTimes(3, ms), second)
	})
	if !errors.Is(err, zk.ErrConnectionClosed) {
		t.Errorf("err = %v, want connection loss", err)
	}
	if firstAttempts.Load() != 3 || secondAttempts.Load() != 2 {
		t.Errorf("attempts %d and %d, want 3 and 2: the second call gets the one retry left",
			firstAttempts.Load(), secondAttempts.Load())
	}
}

func TestConcurrentNestedDoCannotOverspend(t *testing.T) {
	const workers, budget = 8, 5
	l := newFakeClock().loop()
	var attempts atomic.Int32
	_ = l.do(context.Background(), NTimes(budget, 0), func(ctx context.Context) error {
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = l.do(ctx, NTimes(100, 0), func(context.Context) error {
					attempts.Add(1)
					return zk.ErrConnectionClosed
				})
			}()
		}
		wg.Wait()
		return zk.ErrNoNode // not retryable: the outer call ends here
	})
	if got := attempts.Load(); got != workers+budget {
		t.Errorf("%d attempts, want %d: one per worker plus one per retry in the budget", got, workers+budget)
	}
}

func TestNestedNonRetryableErrorPassesThrough(t *testing.T) {
	l := newFakeClock().loop()
	var outerAttempts atomic.Int32
	err := l.do(context.Background(), NTimes(3, ms), func(ctx context.Context) error {
		outerAttempts.Add(1)
		return l.do(ctx, NTimes(3, ms), func(context.Context) error { return zk.ErrNodeExists })
	})
	if !errors.Is(err, zk.ErrNodeExists) || err.Error() != zk.ErrNodeExists.Error() || outerAttempts.Load() != 1 {
		t.Errorf("err = %v after %d outer attempts, want zk.ErrNodeExists unchanged after 1", err, outerAttempts.Load())
	}
}
