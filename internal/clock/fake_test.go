package clock

import (
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var epoch = time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)

func TestFakeRunsDueTimersInOrder(t *testing.T) {
	c := NewFake(epoch)
	var ran []string
	at := map[string]time.Time{}
	arm := func(name string, d time.Duration) Timer {
		return c.AfterFunc(d, func() {
			ran = append(ran, name)
			at[name] = c.Now()
		})
	}
	arm("b", 20*time.Millisecond)
	arm("a", 10*time.Millisecond)
	arm("b2", 20*time.Millisecond) // same due time: after b, armed first
	stopped := arm("never", 15*time.Millisecond)
	arm("late", time.Second)
	if !stopped.Stop() {
		t.Fatal("Stop of a pending timer = false")
	}
	if stopped.Stop() {
		t.Fatal("second Stop = true")
	}

	if n := c.Advance(10*time.Millisecond - 1); n != 0 || len(ran) != 0 {
		t.Fatalf("before any timer is due: ran %d %v", n, ran)
	}
	if n := c.Advance(20 * time.Millisecond); n != 3 {
		t.Fatalf("Advance ran %d timers, want 3", n)
	}
	if want := []string{"a", "b", "b2"}; !slices.Equal(ran, want) {
		t.Fatalf("ran %v, want %v", ran, want)
	}
	if got := at["a"].Sub(epoch); got != 10*time.Millisecond {
		t.Fatalf("a ran with the clock at +%v, want its due time +10ms", got)
	}
	if got := c.Now().Sub(epoch); got != 30*time.Millisecond-1 {
		t.Fatalf("Now = +%v after the advances, want +30ms-1ns", got)
	}
	if p := c.Pending(); len(p) != 1 || !p[0].Equal(epoch.Add(time.Second)) {
		t.Fatalf("Pending = %v, want only the late timer", p)
	}
}

// A timer armed by a timer's function runs in the same Advance if it falls
// due by its end, and one armed with d <= 0 at the next Advance.
func TestFakeTimersArmedByTimers(t *testing.T) {
	c := NewFake(epoch)
	var ticks []time.Duration
	var tick func()
	tick = func() {
		ticks = append(ticks, c.Now().Sub(epoch))
		c.AfterFunc(10*time.Millisecond, tick)
	}
	c.AfterFunc(10*time.Millisecond, tick)
	if n := c.Advance(35 * time.Millisecond); n != 3 {
		t.Fatalf("ran %d, want 3", n)
	}
	if want := []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond}; !slices.Equal(ticks, want) {
		t.Fatalf("ticks at %v, want %v", ticks, want)
	}

	now := false
	c.AfterFunc(-time.Second, func() { now = true })
	if now {
		t.Fatal("a timer ran inside AfterFunc")
	}
	if c.Advance(0) != 1 || !now {
		t.Fatal("Advance(0) did not run the timer due at once")
	}
}
