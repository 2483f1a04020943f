package retry

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// scriptedOp returns errs in order, repeating the last one, and advances
// clock by opTime per attempt when clock is not nil.
func scriptedOp(clock *fakeClock, opTime time.Duration, errs ...error) (op func(context.Context) error, attempts *atomic.Int32) {
	attempts = new(atomic.Int32)
	op = func(context.Context) error {
		n := int(attempts.Add(1))
		if clock != nil {
			clock.advance(opTime)
		}
		return errs[min(n, len(errs))-1]
	}
	return op, attempts
}

func TestDoOutcomes(t *testing.T) {
	lost := zk.ErrConnectionClosed
	tests := []struct {
		name         string
		policy       Policy
		errs         []error
		opTime       time.Duration
		wantAttempts int
		wantSleeps   []time.Duration
		wantErr      error // matched with errors.Is; nil means success
		wantMsg      string
	}{
		{
			name: "success at once", policy: NTimes(3, 10*ms), errs: []error{nil},
			wantAttempts: 1,
		},
		{
			name: "retryable errors then success", policy: NTimes(5, 10*ms),
			errs:         []error{lost, zk.ErrNoServer, ErrOperationTimeout, nil},
			wantAttempts: 4, wantSleeps: []time.Duration{10 * ms, 10 * ms, 10 * ms},
		},
		{
			name: "non-retryable error returned at once", policy: NTimes(5, 10*ms),
			errs:         []error{zk.ErrNoNode},
			wantAttempts: 1, wantErr: zk.ErrNoNode, wantMsg: zk.ErrNoNode.Error(),
		},
		{
			name: "non-retryable error after retries", policy: NTimes(5, 10*ms),
			errs:         []error{lost, zk.ErrBadVersion},
			wantAttempts: 2, wantSleeps: []time.Duration{10 * ms}, wantErr: zk.ErrBadVersion, wantMsg: zk.ErrBadVersion.Error(),
		},
		{
			name: "closing client is not retried", policy: NTimes(5, 10*ms),
			errs:         []error{zk.ErrClosing},
			wantAttempts: 1, wantErr: zk.ErrClosing, wantMsg: zk.ErrClosing.Error(),
		},
		{
			name: "policy refuses", policy: NTimes(2, 10*ms), errs: []error{lost},
			wantAttempts: 3, wantSleeps: []time.Duration{10 * ms, 10 * ms},
			wantErr: lost, wantMsg: "retry: gave up after 2 retries: zk: connection closed",
		},
		{
			name: "zero retries", policy: NTimes(0, 10*ms), errs: []error{lost},
			wantAttempts: 1, wantErr: lost, wantMsg: "retry: gave up after 0 retries: zk: connection closed",
		},
		{
			name: "exponential sleeps", policy: withRand(ExponentialBackoff(10*ms, 3), randMax), errs: []error{lost},
			wantAttempts: 4, wantSleeps: []time.Duration{10 * ms, 30 * ms, 70 * ms},
			wantErr: lost, wantMsg: "retry: gave up after 3 retries: zk: connection closed",
		},
		{
			name: "bounded exponential sleeps", policy: withRand(BoundedExponentialBackoff(10*ms, 40*ms, 4), randMax), errs: []error{lost},
			wantAttempts: 5, wantSleeps: []time.Duration{10 * ms, 30 * ms, 40 * ms, 40 * ms},
			wantErr: lost, wantMsg: "retry: gave up after 4 retries: zk: connection closed",
		},
		{
			// Asked at 0, 30, 60, 90ms: all below 100ms, so the last attempt
			// starts at 120ms, 20ms past maxElapsed.
			name: "until elapsed overshoots by less than one sleep", policy: UntilElapsed(100*ms, 30*ms), errs: []error{lost},
			wantAttempts: 5, wantSleeps: []time.Duration{30 * ms, 30 * ms, 30 * ms, 30 * ms}, wantErr: lost,
			wantMsg: "retry: gave up after 4 retries: zk: connection closed",
		},
		{
			// Asked at 10, 50, 90ms, then at 130ms: refused.
			name: "until elapsed counts time spent in op", policy: UntilElapsed(100*ms, 30*ms), errs: []error{lost}, opTime: 10 * ms,
			wantAttempts: 4, wantSleeps: []time.Duration{30 * ms, 30 * ms, 30 * ms}, wantErr: lost,
		},
		{
			name: "until elapsed boundary is exclusive", policy: UntilElapsed(100*ms, 50*ms), errs: []error{lost},
			wantAttempts: 3, wantSleeps: []time.Duration{50 * ms, 50 * ms}, wantErr: lost,
		},
		{
			name: "forever", policy: Forever(7 * ms), errs: []error{lost, lost, lost, lost, lost, nil},
			wantAttempts: 6, wantSleeps: []time.Duration{7 * ms, 7 * ms, 7 * ms, 7 * ms, 7 * ms},
		},
		{
			name: "session expiry is retried by default", policy: NTimes(5, ms),
			errs:         []error{zk.ErrSessionExpired, nil},
			wantAttempts: 2, wantSleeps: []time.Duration{ms},
		},
		{
			name: "SessionFailed refuses session expiry", policy: SessionFailed(NTimes(5, ms)),
			errs:         []error{zk.ErrSessionExpired},
			wantAttempts: 1, wantErr: zk.ErrSessionExpired,
			wantMsg: "retry: gave up after 0 retries: zk: session has been expired by the server",
		},
		{
			name: "SessionFailed allows connection loss", policy: SessionFailed(NTimes(5, ms)),
			errs:         []error{lost, lost, nil},
			wantAttempts: 3, wantSleeps: []time.Duration{ms, ms},
		},
		{
			name: "SessionFailed stops at expiry after connection loss", policy: SessionFailed(NTimes(5, ms)),
			errs:         []error{lost, zk.ErrSessionExpired},
			wantAttempts: 2, wantSleeps: []time.Duration{ms}, wantErr: zk.ErrSessionExpired,
			wantMsg: "retry: gave up after 1 retries: zk: session has been expired by the server",
		},
		{
			name: "marked errors are retried", policy: NTimes(5, ms),
			errs:         []error{Retryable(errors.New("framework: reconnecting")), nil},
			wantAttempts: 2, wantSleeps: []time.Duration{ms},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			op, attempts := scriptedOp(clock, tt.opTime, tt.errs...)
			err := clock.loop().do(context.Background(), tt.policy, op)
			if got := int(attempts.Load()); got != tt.wantAttempts {
				t.Errorf("attempts = %d, want %d", got, tt.wantAttempts)
			}
			if got := clock.slept(); !slices.Equal(got, tt.wantSleeps) {
				t.Errorf("sleeps = %v, want %v", got, tt.wantSleeps)
			}
			switch {
			case tt.wantErr == nil && err != nil:
				t.Errorf("err = %v, want nil", err)
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Errorf("err = %v, want one wrapping %v", err, tt.wantErr)
			case tt.wantMsg != "" && err.Error() != tt.wantMsg:
				t.Errorf("err = %q, want %q", err, tt.wantMsg)
			}
		})
	}
}

func TestDoAsksPolicyWithCountAndElapsed(t *testing.T) {
	clock := newFakeClock()
	rec := &recorder{inner: NTimes(3, 20*ms)}
	op, _ := scriptedOp(clock, 5*ms, zk.ErrConnectionClosed)
	_ = clock.loop().do(context.Background(), rec, op)
	want := []query{{0, 5 * ms}, {1, 30 * ms}, {2, 55 * ms}, {3, 80 * ms}}
	if got := rec.queries(); !slices.Equal(got, want) {
		t.Errorf("policy asked %v, want %v", got, want)
	}
}

// errorRecorder is an ErrorAware policy that records the errors it sees.
type errorRecorder struct {
	seen []error
}

func (r *errorRecorder) AllowRetry(int, time.Duration) (time.Duration, bool) {
	panic("Do must prefer AllowRetryErr")
}

func (r *errorRecorder) AllowRetryErr(err error, retryCount int, _ time.Duration) (time.Duration, bool) {
	r.seen = append(r.seen, err)
	return ms, retryCount < 1
}

func TestDoPrefersErrorAware(t *testing.T) {
	clock := newFakeClock()
	rec := &errorRecorder{}
	op, _ := scriptedOp(nil, 0, zk.ErrNoServer, zk.ErrSessionMoved)
	err := clock.loop().do(context.Background(), rec, op)
	if !errors.Is(err, zk.ErrSessionMoved) {
		t.Errorf("err = %v, want session moved", err)
	}
	if want := []error{zk.ErrNoServer, zk.ErrSessionMoved}; !slices.Equal(rec.seen, want) {
		t.Errorf("policy saw %v, want %v", rec.seen, want)
	}
}

func TestDoContextDoneBeforeFirstAttempt(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel2()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want error
	}{
		{"canceled", canceled, context.Canceled},
		{"deadline", expired, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op, attempts := scriptedOp(nil, 0, nil)
			err := Do(tc.ctx, Forever(ms), op)
			if !errors.Is(err, tc.want) || err.Error() != tc.want.Error() {
				t.Errorf("err = %v, want plain %v", err, tc.want)
			}
			if attempts.Load() != 0 {
				t.Errorf("op called %d times", attempts.Load())
			}
		})
	}
}

func TestDoCancelDuringInjectedSleep(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var slept []time.Duration
	l := loop{
		now: time.Now,
		sleep: func(ctx context.Context, d time.Duration) error {
			slept = append(slept, d)
			cancel() // the caller gives up while Do waits
			<-ctx.Done()
			return ctx.Err()
		},
	}
	op, attempts := scriptedOp(nil, 0, zk.ErrConnectionClosed)
	err := l.do(ctx, Forever(time.Hour), op)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, zk.ErrConnectionClosed) {
		t.Errorf("err = %v, want both context.Canceled and the last op error", err)
	}
	if want := "retry: context canceled while waiting to retry: zk: connection closed"; err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
	if attempts.Load() != 1 || !slices.Equal(slept, []time.Duration{time.Hour}) {
		t.Errorf("attempts %d, sleeps %v; want 1 attempt and one 1h sleep", attempts.Load(), slept)
	}
}

func TestDoCancelInterruptsRealSleep(t *testing.T) {
	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		timer := time.AfterFunc(10*ms, cancel)
		defer timer.Stop()
		op, attempts := scriptedOp(nil, 0, zk.ErrNoServer)
		err := Do(ctx, Forever(time.Hour), op)
		if !errors.Is(err, context.Canceled) || !errors.Is(err, zk.ErrNoServer) {
			t.Errorf("err = %v, want both context.Canceled and the last op error", err)
		}
		if attempts.Load() != 1 {
			t.Errorf("attempts = %d, want 1", attempts.Load())
		}
	})
	t.Run("deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*ms)
		defer cancel()
		op, _ := scriptedOp(nil, 0, zk.ErrSessionMoved)
		err := Do(ctx, NTimes(3, time.Hour), op)
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, zk.ErrSessionMoved) {
			t.Errorf("err = %v, want both context.DeadlineExceeded and the last op error", err)
		}
	})
}

func TestDoContextEndsDuringOp(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opErr   error
		wantCtx bool
	}{
		{"retryable error", zk.ErrConnectionClosed, true},
		{"non-retryable error", zk.ErrNoNode, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			rec := &recorder{inner: Forever(ms)}
			err := Do(ctx, rec, func(context.Context) error {
				cancel()
				return tc.opErr
			})
			if !errors.Is(err, tc.opErr) || errors.Is(err, context.Canceled) != tc.wantCtx {
				t.Errorf("err = %v; want %v, wrapping context.Canceled: %v", err, tc.opErr, tc.wantCtx)
			}
			if q := rec.queries(); len(q) != 0 {
				t.Errorf("policy asked %v after ctx ended", q)
			}
		})
	}
}

func TestDoNilOp(t *testing.T) {
	if err := Do(context.Background(), NTimes(1, 0), nil); !errors.Is(err, errNilOp) {
		t.Errorf("err = %v, want %v", err, errNilOp)
	}
}

func TestSleepCtx(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if err := sleepCtx(done, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("done ctx, no sleep: %v, want context.Canceled", err)
	}
	if err := sleepCtx(done, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("done ctx, 1h sleep: %v, want context.Canceled", err)
	}
	if err := sleepCtx(context.Background(), 0); err != nil {
		t.Errorf("no sleep: %v", err)
	}
	if err := sleepCtx(context.Background(), ms); err != nil {
		t.Errorf("1ms sleep: %v", err)
	}
}

func TestDoHonoursCancelThatRacesTheTimer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l := loop{
		now: time.Now,
		sleep: func(context.Context, time.Duration) error {
			cancel() // the timer and the cancellation fire together; the timer wins the select
			return nil
		},
	}
	op, attempts := scriptedOp(nil, 0, zk.ErrConnectionClosed)
	err := l.do(ctx, Forever(ms), op)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, zk.ErrConnectionClosed) || attempts.Load() != 1 {
		t.Errorf("err = %v after %d attempts, want both errors after 1", err, attempts.Load())
	}
}
