package retry

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/go-zookeeper/zk"
)

// listBackOff hands out durations in order, then backoff.Stop.
type listBackOff struct {
	list   []time.Duration
	next   int
	resets int
}

func (b *listBackOff) NextBackOff() time.Duration {
	if b.next >= len(b.list) {
		return backoff.Stop
	}
	b.next++
	return b.list[b.next-1]
}

func (b *listBackOff) Reset() { b.next = 0; b.resets++ }

// countingFactory returns a factory of listBackOffs and a count of calls.
func countingFactory(list ...time.Duration) (func() backoff.BackOff, *atomic.Int32) {
	calls := new(atomic.Int32)
	return func() backoff.BackOff {
		calls.Add(1)
		return &listBackOff{list: list}
	}, calls
}

func TestFromBackOffInDo(t *testing.T) {
	factory, calls := countingFactory(5*ms, 7*ms, 11*ms)
	p := FromBackOff(factory)
	for run := range 2 {
		clock := newFakeClock()
		op, attempts := scriptedOp(nil, 0, zk.ErrConnectionClosed)
		err := clock.loop().do(context.Background(), p, op)
		if want := "retry: gave up after 3 retries: zk: connection closed"; err == nil || err.Error() != want {
			t.Errorf("run %d: err = %v, want %q", run, err, want)
		}
		if attempts.Load() != 4 {
			t.Errorf("run %d: %d attempts, want 4", run, attempts.Load())
		}
		if want := []time.Duration{5 * ms, 7 * ms, 11 * ms}; !slices.Equal(clock.slept(), want) {
			t.Errorf("run %d: sleeps %v, want %v", run, clock.slept(), want)
		}
	}
	if calls.Load() != 2 {
		t.Errorf("factory called %d times, want once per Do", calls.Load())
	}
}

func TestFromBackOffResetsTheFreshBackOff(t *testing.T) {
	b := &listBackOff{list: []time.Duration{ms}, next: 1}
	op, attempts := scriptedOp(nil, 0, zk.ErrConnectionClosed, nil)
	err := newFakeClock().loop().do(context.Background(), FromBackOff(func() backoff.BackOff { return b }), op)
	if err != nil || attempts.Load() != 2 || b.resets != 1 {
		t.Errorf("err %v, %d attempts, %d resets; want nil, 2, 1", err, attempts.Load(), b.resets)
	}
}

func TestFromBackOffStopMeansNoRetry(t *testing.T) {
	p := FromBackOff(func() backoff.BackOff { return &backoff.StopBackOff{} })
	op, attempts := scriptedOp(nil, 0, zk.ErrNoServer)
	err := newFakeClock().loop().do(context.Background(), p, op)
	if !errors.Is(err, zk.ErrNoServer) || attempts.Load() != 1 {
		t.Errorf("err %v after %d attempts, want gave up after 1", err, attempts.Load())
	}
}

func TestFromBackOffWithCenkaltiPolicies(t *testing.T) {
	p := FromBackOff(func() backoff.BackOff {
		return backoff.WithMaxRetries(backoff.NewConstantBackOff(3*ms), 2)
	})
	clock := newFakeClock()
	op, attempts := scriptedOp(nil, 0, zk.ErrConnectionClosed)
	_ = clock.loop().do(context.Background(), p, op)
	if want := []time.Duration{3 * ms, 3 * ms}; attempts.Load() != 3 || !slices.Equal(clock.slept(), want) {
		t.Errorf("%d attempts, sleeps %v; want 3 and %v", attempts.Load(), clock.slept(), want)
	}
}

func TestFromBackOffConcurrentDoGetSeparateBackOffs(t *testing.T) {
	factory, calls := countingFactory(0, 0)
	p := FromBackOff(factory)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			op, attempts := scriptedOp(nil, 0, zk.ErrConnectionClosed)
			_ = Do(context.Background(), p, op)
			if attempts.Load() != 3 {
				t.Errorf("%d attempts, want 3", attempts.Load())
			}
		}()
	}
	wg.Wait()
	if calls.Load() != 8 {
		t.Errorf("factory called %d times, want 8", calls.Load())
	}
}

func TestFromBackOffUnderSessionFailedStillFresh(t *testing.T) {
	factory, calls := countingFactory(ms)
	p := SessionFailed(FromBackOff(factory))
	for range 2 {
		op, attempts := scriptedOp(nil, 0, zk.ErrConnectionClosed)
		_ = newFakeClock().loop().do(context.Background(), p, op)
		if attempts.Load() != 2 {
			t.Errorf("%d attempts, want 2", attempts.Load())
		}
	}
	if calls.Load() != 2 {
		t.Errorf("factory called %d times, want 2", calls.Load())
	}
}

func TestFromBackOffAskedDirectly(t *testing.T) {
	factory, calls := countingFactory(1*ms, 2*ms)
	p := FromBackOff(factory)
	got := []answer{}
	for _, retryCount := range []int{0, 1, 2, 0} {
		d, ok := p.AllowRetry(retryCount, 0)
		got = append(got, answer{d, ok})
	}
	want := []answer{{1 * ms, true}, {2 * ms, true}, {0, false}, {1 * ms, true}}
	if !slices.Equal(got, want) {
		t.Errorf("answers %v, want %v", got, want)
	}
	if calls.Load() != 2 {
		t.Errorf("factory called %d times, want 2: once at first use, once at the next retryCount 0", calls.Load())
	}
}

func nextBackOffs(b backoff.BackOff, n int) []time.Duration {
	var out []time.Duration
	for range n {
		out = append(out, b.NextBackOff())
	}
	return out
}

func TestToBackOffSequences(t *testing.T) {
	stop := backoff.Stop
	tests := []struct {
		name   string
		policy Policy
		want   []time.Duration
	}{
		{"NTimes", NTimes(2, 5*ms), []time.Duration{5 * ms, 5 * ms, stop}},
		{"OneTime", OneTime(5 * ms), []time.Duration{5 * ms, stop, stop}},
		{"ExponentialBackoff", withRand(ExponentialBackoff(10*ms, 3), randMax), []time.Duration{10 * ms, 30 * ms, 70 * ms, stop}},
		{"BoundedExponentialBackoff", withRand(BoundedExponentialBackoff(10*ms, 20*ms, 3), randMax), []time.Duration{10 * ms, 20 * ms, 20 * ms, stop}},
		{"Forever", Forever(ms), []time.Duration{ms, ms, ms}},
		{"SessionFailed", SessionFailed(NTimes(1, ms)), []time.Duration{ms, stop}},
		{"FromBackOff", FromBackOff(func() backoff.BackOff { return &listBackOff{list: []time.Duration{ms, 2 * ms}} }), []time.Duration{ms, 2 * ms, stop}},
		{"nil policy", nil, []time.Duration{stop}},
		{"invalid policy", NTimes(-1, ms), []time.Duration{stop}},
		{"factory returning nil", FromBackOff(func() backoff.BackOff { return nil }), []time.Duration{stop}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := ToBackOff(tt.policy)
			if got := nextBackOffs(b, len(tt.want)); !slices.Equal(got, tt.want) {
				t.Errorf("NextBackOff = %v, want %v", got, tt.want)
			}
			b.Reset()
			if got := nextBackOffs(b, len(tt.want)); !slices.Equal(got, tt.want) {
				t.Errorf("after Reset, NextBackOff = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestToBackOffTracksCountAndElapsed(t *testing.T) {
	clock := newFakeClock()
	rec := &recorder{inner: UntilElapsed(100*ms, 30*ms)}
	b := newToBackOff(rec, clock.now)
	var got []time.Duration
	for _, step := range []time.Duration{0, 40 * ms, 59 * ms, ms} {
		clock.advance(step)
		got = append(got, b.NextBackOff())
	}
	if want := []time.Duration{30 * ms, 30 * ms, 30 * ms, backoff.Stop}; !slices.Equal(got, want) {
		t.Errorf("NextBackOff = %v, want %v", got, want)
	}
	b.Reset()
	clock.advance(10 * ms)
	if d := b.NextBackOff(); d != 30*ms {
		t.Errorf("after Reset, NextBackOff = %v, want 30ms", d)
	}
	want := []query{{0, 0}, {1, 40 * ms}, {2, 99 * ms}, {3, 100 * ms}, {0, 10 * ms}}
	if !slices.Equal(rec.queries(), want) {
		t.Errorf("policy asked %v, want %v", rec.queries(), want)
	}
}

func TestToBackOffDrivesBackoffRetry(t *testing.T) {
	attempts := 0
	err := backoff.Retry(func() error {
		attempts++
		if attempts < 3 {
			return zk.ErrConnectionClosed
		}
		return nil
	}, ToBackOff(NTimes(5, 0)))
	if err != nil || attempts != 3 {
		t.Errorf("err %v after %d attempts, want nil after 3", err, attempts)
	}
	attempts = 0
	err = backoff.Retry(func() error { attempts++; return zk.ErrConnectionClosed }, ToBackOff(NTimes(2, 0)))
	if !errors.Is(err, zk.ErrConnectionClosed) || attempts != 3 {
		t.Errorf("err %v after %d attempts, want connection loss after 3", err, attempts)
	}
}

func TestToBackOffResetTakesAFreshBackOff(t *testing.T) {
	factory, calls := countingFactory(ms)
	b := ToBackOff(FromBackOff(factory))
	b.Reset()
	b.Reset()
	if calls.Load() != 3 {
		t.Errorf("factory called %d times, want 3: at creation and at each Reset", calls.Load())
	}
}
