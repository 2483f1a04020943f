package clock

import (
	"slices"
	"sync"
	"time"
)

// Fake is a Clock for tests. Its time stands still until Advance, which
// calls the functions of the timers that fall due, in order of their due
// time (then of their creation), on the caller's goroutine: when Advance
// returns, every timer due by then has run, including those armed by the
// functions it ran. A timer armed with d <= 0 is due at once, and runs at
// the next Advance (Advance(0) runs it). Fake is safe for concurrent use.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	seq    uint64
	timers []*fakeTimer
}

// NewFake returns a Fake clock reading now.
func NewFake(now time.Time) *Fake { return &Fake{now: now} }

type fakeTimer struct {
	c    *Fake
	when time.Time
	seq  uint64
	f    func()
}

// Now returns the fake time.
func (c *Fake) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc arms a timer due d after the fake time.
func (c *Fake) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &fakeTimer{c: c, when: c.now.Add(max(d, 0)), seq: c.seq, f: f}
	c.timers = append(c.timers, t)
	return t
}

// Stop disarms the timer; false if it has run or was stopped already.
func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	for i, p := range t.c.timers {
		if p == t {
			t.c.timers = append(t.c.timers[:i], t.c.timers[i+1:]...)
			return true
		}
	}
	return false
}

// Advance moves the fake time forward by d (not at all for d <= 0) and
// runs the timers due by then, each with the clock reading its due time.
// It returns how many ran. c's lock is not held while a timer's function
// runs, so it may use the clock.
func (c *Fake) Advance(d time.Duration) int {
	c.mu.Lock()
	target := c.now.Add(max(d, 0))
	ran := 0
	for {
		t := c.nextDueLocked(target)
		if t == nil {
			break
		}
		if t.when.After(c.now) {
			c.now = t.when
		}
		c.mu.Unlock()
		t.f()
		ran++
		c.mu.Lock()
	}
	c.now = target
	c.mu.Unlock()
	return ran
}

// nextDueLocked takes the first timer due by target off the list.
func (c *Fake) nextDueLocked(target time.Time) *fakeTimer {
	k := -1
	for i, t := range c.timers {
		if t.when.After(target) {
			continue
		}
		if k < 0 || t.when.Before(c.timers[k].when) || (t.when.Equal(c.timers[k].when) && t.seq < c.timers[k].seq) {
			k = i
		}
	}
	if k < 0 {
		return nil
	}
	t := c.timers[k]
	c.timers = append(c.timers[:k], c.timers[k+1:]...)
	return t
}

// Pending returns the due times of the armed timers, earliest first.
func (c *Fake) Pending() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	due := make([]time.Time, len(c.timers))
	for i, t := range c.timers {
		due[i] = t.when
	}
	slices.SortFunc(due, time.Time.Compare)
	return due
}
