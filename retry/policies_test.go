package retry

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

func randMax(n int64) int64  { return n - 1 }
func randZero(int64) int64   { return 0 }
func randHalf(n int64) int64 { return n / 2 }

const ms = time.Millisecond

func TestPolicySequences(t *testing.T) {
	tests := []struct {
		name    string
		policy  Policy
		queries []query
		want    []answer
	}{
		{
			name:    "ExponentialBackoff largest draws",
			policy:  withRand(ExponentialBackoff(10*ms, 4), randMax),
			queries: []query{{0, 0}, {1, 0}, {2, 0}, {3, 0}, {4, 0}, {5, 0}},
			want:    []answer{{10 * ms, true}, {30 * ms, true}, {70 * ms, true}, {150 * ms, true}, {0, false}, {0, false}},
		},
		{
			name:    "ExponentialBackoff draw of 0 sleeps base",
			policy:  withRand(ExponentialBackoff(10*ms, 3), randZero),
			queries: []query{{0, 0}, {1, 0}, {2, 0}, {3, 0}},
			want:    []answer{{10 * ms, true}, {10 * ms, true}, {10 * ms, true}, {0, false}},
		},
		{
			name:    "ExponentialBackoff middle draws",
			policy:  withRand(ExponentialBackoff(10*ms, 4), randHalf),
			queries: []query{{0, 0}, {1, 0}, {2, 0}, {3, 0}, {4, 0}},
			want:    []answer{{10 * ms, true}, {20 * ms, true}, {40 * ms, true}, {80 * ms, true}, {0, false}},
		},
		{
			name:    "ExponentialBackoff ignores elapsed",
			policy:  withRand(ExponentialBackoff(10*ms, 1), randMax),
			queries: []query{{0, 24 * time.Hour}, {1, 0}},
			want:    []answer{{10 * ms, true}, {0, false}},
		},
		{
			name:    "ExponentialBackoff negative retryCount counts as 0",
			policy:  withRand(ExponentialBackoff(10*ms, 2), randMax),
			queries: []query{{-1, 0}},
			want:    []answer{{10 * ms, true}},
		},
		{
			name:    "ExponentialBackoff zero retries never retries",
			policy:  withRand(ExponentialBackoff(10*ms, 0), randMax),
			queries: []query{{0, 0}},
			want:    []answer{{0, false}},
		},
		{
			name:    "BoundedExponentialBackoff caps each sleep",
			policy:  withRand(BoundedExponentialBackoff(10*ms, 50*ms, 5), randMax),
			queries: []query{{0, 0}, {1, 0}, {2, 0}, {3, 0}, {4, 0}, {5, 0}},
			want:    []answer{{10 * ms, true}, {30 * ms, true}, {50 * ms, true}, {50 * ms, true}, {50 * ms, true}, {0, false}},
		},
		{
			name:    "BoundedExponentialBackoff cap below base",
			policy:  withRand(BoundedExponentialBackoff(10*ms, 5*ms, 2), randZero),
			queries: []query{{0, 0}, {1, 0}, {2, 0}},
			want:    []answer{{5 * ms, true}, {5 * ms, true}, {0, false}},
		},
		{
			name:    "NTimes",
			policy:  NTimes(3, 25*ms),
			queries: []query{{0, 0}, {1, time.Hour}, {2, 0}, {3, 0}, {10, 0}},
			want:    []answer{{25 * ms, true}, {25 * ms, true}, {25 * ms, true}, {0, false}, {0, false}},
		},
		{
			name:    "NTimes zero never retries",
			policy:  NTimes(0, 25*ms),
			queries: []query{{0, 0}},
			want:    []answer{{0, false}},
		},
		{
			name:    "OneTime",
			policy:  OneTime(5 * ms),
			queries: []query{{0, 0}, {1, 0}},
			want:    []answer{{5 * ms, true}, {0, false}},
		},
		{
			name:    "UntilElapsed decides on elapsed alone",
			policy:  UntilElapsed(100*ms, 30*ms),
			queries: []query{{0, 0}, {1000, 50 * ms}, {5, 99 * ms}, {6, 100 * ms}, {0, 101 * ms}},
			want:    []answer{{30 * ms, true}, {30 * ms, true}, {30 * ms, true}, {0, false}, {0, false}},
		},
		{
			name:    "UntilElapsed zero never retries",
			policy:  UntilElapsed(0, 30*ms),
			queries: []query{{0, 0}},
			want:    []answer{{0, false}},
		},
		{
			name:    "Forever",
			policy:  Forever(7 * ms),
			queries: []query{{0, 0}, {1_000_000, 24 * time.Hour}, {math.MaxInt, math.MaxInt64}},
			want:    []answer{{7 * ms, true}, {7 * ms, true}, {7 * ms, true}},
		},
		{
			name:    "SessionFailed without an error defers to its policy",
			policy:  SessionFailed(NTimes(2, 3*ms)),
			queries: []query{{0, 0}, {1, 0}, {2, 0}},
			want:    []answer{{3 * ms, true}, {3 * ms, true}, {0, false}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := Validate(tt.policy); err != nil {
				t.Fatalf("Validate = %v", err)
			}
			for i, q := range tt.queries {
				d, ok := tt.policy.AllowRetry(q.retryCount, q.elapsed)
				if got := (answer{d, ok}); got != tt.want[i] {
					t.Errorf("AllowRetry(%d, %v) = %v, want %v", q.retryCount, q.elapsed, got, tt.want[i])
				}
			}
		})
	}
}

func TestExponentialBackoffDrawsFromDoublingRange(t *testing.T) {
	draw, bounds := script(1, 0, 5, 15, 2)
	p := withRand(ExponentialBackoff(10*ms, 5), draw)
	var got []time.Duration
	for i := range 5 {
		d, ok := p.AllowRetry(i, 0)
		if !ok {
			t.Fatalf("retry %d refused", i)
		}
		got = append(got, d)
	}
	want := []time.Duration{10 * ms, 10 * ms, 50 * ms, 150 * ms, 20 * ms}
	if !slices.Equal(got, want) {
		t.Errorf("sleeps = %v, want %v", got, want)
	}
	if wantBounds := []int64{2, 4, 8, 16, 32}; !slices.Equal(*bounds, wantBounds) {
		t.Errorf("draw bounds = %v, want %v", *bounds, wantBounds)
	}
}

func TestExponentialBackoffCapsRetriesAt29(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy func(maxRetries int) Policy
	}{
		{"ExponentialBackoff", func(n int) Policy { return ExponentialBackoff(ms, n) }},
		{"BoundedExponentialBackoff", func(n int) Policy { return BoundedExponentialBackoff(ms, math.MaxInt64, n) }},
	} {
		for _, maxRetries := range []int{29, 30, 1000, math.MaxInt} {
			draw, bounds := script(1<<29 - 1)
			p := withRand(tc.policy(maxRetries), draw)
			d, ok := p.AllowRetry(28, 0)
			if !ok || d != (1<<29-1)*ms {
				t.Errorf("%s(maxRetries %d): retry 28 = %v, %v; want %v, true", tc.name, maxRetries, d, ok, (1<<29-1)*ms)
			}
			if want := []int64{1 << 29}; !slices.Equal(*bounds, want) {
				t.Errorf("%s(maxRetries %d): draw bounds = %v, want %v", tc.name, maxRetries, *bounds, want)
			}
			if d, ok := p.AllowRetry(29, 0); ok {
				t.Errorf("%s(maxRetries %d): retry 29 allowed (sleep %v); the cap is 29 retries", tc.name, maxRetries, d)
			}
		}
	}
	if _, ok := withRand(ExponentialBackoff(ms, 28), randMax).AllowRetry(28, 0); ok {
		t.Error("maxRetries 28 allowed retry 28")
	}
}

func TestExponentialBackoffSaturatesInsteadOfOverflowing(t *testing.T) {
	d, ok := withRand(ExponentialBackoff(time.Hour, 29), randMax).AllowRetry(28, 0)
	if !ok || d != math.MaxInt64 {
		t.Errorf("unbounded = %v, %v; want the largest Duration", d, ok)
	}
	d, ok = withRand(BoundedExponentialBackoff(time.Hour, 2*time.Hour, 29), randMax).AllowRetry(28, 0)
	if !ok || d != 2*time.Hour {
		t.Errorf("bounded = %v, %v; want 2h", d, ok)
	}
}

func TestExponentialBackoffRealRandomStaysInRange(t *testing.T) {
	const base = 3 * ms
	p := ExponentialBackoff(base, 10)
	for retry := range 10 {
		hi := base * time.Duration(int64(1)<<(retry+1)-1)
		for range 200 {
			d, ok := p.AllowRetry(retry, 0)
			if !ok || d < base || d > hi || d%base != 0 {
				t.Fatalf("retry %d: sleep %v, %v; want a multiple of %v in [%v, %v]", retry, d, ok, base, base, hi)
			}
		}
	}
}

func TestSessionFailedSeesTheError(t *testing.T) {
	p := SessionFailed(NTimes(2, 3*ms)).(ErrorAware)
	tests := []struct {
		name       string
		err        error
		retryCount int
		want       answer
	}{
		{"session expired", zk.ErrSessionExpired, 0, answer{0, false}},
		{"wrapped session expired", fmt.Errorf("get /a: %w", zk.ErrSessionExpired), 0, answer{0, false}},
		{"connection closed", zk.ErrConnectionClosed, 0, answer{3 * ms, true}},
		{"no server", zk.ErrNoServer, 1, answer{3 * ms, true}},
		{"connection closed past the inner budget", zk.ErrConnectionClosed, 2, answer{0, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := p.AllowRetryErr(tt.err, tt.retryCount, 0)
			if got := (answer{d, ok}); got != tt.want {
				t.Errorf("AllowRetryErr(%v, %d) = %v, want %v", tt.err, tt.retryCount, got, tt.want)
			}
		})
	}
}

func TestSessionFailedPassesTheErrorOn(t *testing.T) {
	inner := &errorRecorder{}
	p := SessionFailed(inner).(ErrorAware)
	p.AllowRetryErr(zk.ErrSessionMoved, 0, 0)
	p.AllowRetryErr(zk.ErrSessionExpired, 1, 0)
	if want := []error{zk.ErrSessionMoved}; !slices.Equal(inner.seen, want) {
		t.Errorf("inner policy saw %v, want %v", inner.seen, want)
	}
}
