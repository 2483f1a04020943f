package retry

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
)

func TestInvalidPolicies(t *testing.T) {
	tests := []struct {
		name    string
		policy  Policy
		wantMsg string
	}{
		{"nil", nil, "retry: invalid policy: nil policy"},
		{"ExponentialBackoff negative base", ExponentialBackoff(-ms, 3), "retry: invalid policy: ExponentialBackoff: negative base -1ms"},
		{"ExponentialBackoff negative retries", ExponentialBackoff(ms, -1), "retry: invalid policy: ExponentialBackoff: negative maxRetries -1"},
		{"BoundedExponentialBackoff negative base", BoundedExponentialBackoff(-ms, ms, 3), "retry: invalid policy: BoundedExponentialBackoff: negative base -1ms"},
		{"BoundedExponentialBackoff negative maxSleep", BoundedExponentialBackoff(ms, -ms, 3), "retry: invalid policy: BoundedExponentialBackoff: negative maxSleep -1ms"},
		{"BoundedExponentialBackoff negative retries", BoundedExponentialBackoff(ms, ms, -3), "retry: invalid policy: BoundedExponentialBackoff: negative maxRetries -3"},
		{"NTimes negative n", NTimes(-1, ms), "retry: invalid policy: NTimes: negative n -1"},
		{"NTimes negative sleep", NTimes(1, -ms), "retry: invalid policy: NTimes: negative sleep -1ms"},
		{"OneTime negative sleep", OneTime(-ms), "retry: invalid policy: OneTime: negative sleep -1ms"},
		{"UntilElapsed negative maxElapsed", UntilElapsed(-ms, ms), "retry: invalid policy: UntilElapsed: negative maxElapsed -1ms"},
		{"UntilElapsed negative sleep", UntilElapsed(ms, -ms), "retry: invalid policy: UntilElapsed: negative sleep -1ms"},
		{"Forever negative interval", Forever(-ms), "retry: invalid policy: Forever: negative interval -1ms"},
		{"SessionFailed nil", SessionFailed(nil), "retry: invalid policy: SessionFailed: nil policy"},
		{"SessionFailed of an invalid policy", SessionFailed(NTimes(-2, 0)), "retry: invalid policy: NTimes: negative n -2"},
		{"FromBackOff nil", FromBackOff(nil), "retry: invalid policy: FromBackOff: nil factory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.policy)
			if !errors.Is(err, ErrInvalidPolicy) || err.Error() != tt.wantMsg {
				t.Errorf("Validate = %v, want %q", err, tt.wantMsg)
			}
			if tt.policy != nil {
				if d, ok := tt.policy.AllowRetry(0, 0); ok {
					t.Errorf("invalid policy allowed a retry after %v", d)
				}
			}
			op, attempts := scriptedOp(nil, 0, nil)
			err = Do(context.Background(), tt.policy, op)
			if !errors.Is(err, ErrInvalidPolicy) || err.Error() != tt.wantMsg {
				t.Errorf("Do = %v, want %q", err, tt.wantMsg)
			}
			if attempts.Load() != 0 {
				t.Errorf("Do called op %d times for an invalid policy", attempts.Load())
			}
		})
	}
}

func TestFactoryReturningNilIsReportedByDo(t *testing.T) {
	p := FromBackOff(func() backoff.BackOff { return nil })
	if err := Validate(p); err != nil {
		t.Errorf("Validate = %v; it must not call the factory", err)
	}
	for _, p := range []Policy{p, SessionFailed(p)} {
		op, attempts := scriptedOp(nil, 0, nil)
		err := Do(context.Background(), p, op)
		if !errors.Is(err, ErrInvalidPolicy) || attempts.Load() != 0 {
			t.Errorf("Do = %v after %d attempts, want ErrInvalidPolicy without calling op", err, attempts.Load())
		}
		if d, ok := p.AllowRetry(0, 0); ok {
			t.Errorf("AllowRetry allowed a retry after %v", d)
		}
	}
}

func TestEdgeValuesAreValid(t *testing.T) {
	for name, p := range map[string]Policy{
		"ExponentialBackoff zero":          ExponentialBackoff(0, 0),
		"ExponentialBackoff clamped":       ExponentialBackoff(ms, math.MaxInt),
		"BoundedExponentialBackoff zero":   BoundedExponentialBackoff(0, 0, 0),
		"NTimes zero":                      NTimes(0, 0),
		"OneTime zero":                     OneTime(0),
		"UntilElapsed zero":                UntilElapsed(0, 0),
		"Forever zero":                     Forever(0),
		"SessionFailed of Forever":         SessionFailed(Forever(time.Second)),
		"SessionFailed of SessionFailed":   SessionFailed(SessionFailed(NTimes(1, 0))),
		"FromBackOff of a cenkalti policy": FromBackOff(func() backoff.BackOff { return backoff.NewExponentialBackOff() }),
	} {
		if err := Validate(p); err != nil {
			t.Errorf("%s: Validate = %v", name, err)
		}
	}
}

func TestInvalidPolicyWinsOverDoneContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Do(ctx, Forever(-1), func(context.Context) error { return nil }); !errors.Is(err, ErrInvalidPolicy) {
		t.Errorf("Do = %v, want ErrInvalidPolicy", err)
	}
}
