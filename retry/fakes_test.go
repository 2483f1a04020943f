package retry

import (
	"context"
	"sync"
	"time"
)

// fakeClock is a clock and sleeper for loop: sleeping advances the clock
// at once and records the duration.
type fakeClock struct {
	mu     sync.Mutex
	t      time.Time
	sleeps []time.Duration
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func (c *fakeClock) sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	c.sleeps = append(c.sleeps, d)
	return nil
}

func (c *fakeClock) slept() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

func (c *fakeClock) loop() loop {
	return loop{now: c.now, sleep: c.sleep}
}

// query is one question to a policy; answer is its reply.
type query struct {
	retryCount int
	elapsed    time.Duration
}

type answer struct {
	sleep time.Duration
	ok    bool
}

// recorder is a policy that records what it is asked and defers to inner.
type recorder struct {
	inner Policy

	mu   sync.Mutex
	seen []query
}

func (r *recorder) AllowRetry(retryCount int, elapsed time.Duration) (time.Duration, bool) {
	r.mu.Lock()
	r.seen = append(r.seen, query{retryCount, elapsed})
	r.mu.Unlock()
	return r.inner.AllowRetry(retryCount, elapsed)
}

func (r *recorder) queries() []query {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]query(nil), r.seen...)
}

// withRand returns p, an exponential policy, drawing from r.
func withRand(p Policy, r func(n int64) int64) Policy {
	e := p.(exponential)
	e.rand = r
	return e
}

// script returns a random source that hands out values in order and
// records the bound of each draw.
func script(values ...int64) (draw func(n int64) int64, bounds *[]int64) {
	bounds = new([]int64)
	draw = func(n int64) int64 {
		*bounds = append(*bounds, n)
		v := values[0]
		values = values[1:]
		if v < 0 || v >= n {
			panic("scripted value out of range")
		}
		return v
	}
	return draw, bounds
}
