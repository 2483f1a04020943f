package connstate

import (
	"testing"
	"time"

	"github.com/gocurator/curator/internal/clock"
	"github.com/gocurator/curator/retry"
)

// newTestBreaker returns a breaker on a fake clock. Handle and the fake's
// Advance run the listener synchronously, so once either returns every
// state it forwarded is in r: a check for "nothing more" needs no wait.
func newTestBreaker(t *testing.T, p retry.Policy) (*CircuitBreaker, *recorder, *clock.Fake) {
	t.Helper()
	r := newRecorder()
	b := NewCircuitBreaker(r.fn, p)
	fake := clock.NewFake(time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC))
	b.clock = fake
	t.Cleanup(b.Close)
	return b, r, fake
}

// want fails unless exactly the states want were forwarded since the last
// call.
func (r *recorder) want(t *testing.T, want ...State) {
	t.Helper()
	for i, w := range want {
		select {
		case s := <-r.got:
			if s != w {
				t.Fatalf("state %d: got %v, want %v (want %v)", i, s, w, want)
			}
		default:
			t.Fatalf("state %d: nothing forwarded, want %v (want %v)", i, w, want)
		}
	}
	select {
	case s := <-r.got:
		t.Fatalf("unexpected extra state %v after %v", s, want)
	default:
	}
}

func TestCircuitBreakerDampsFlapping(t *testing.T) {
	// Open for 3 × 50ms at most.
	b, r, fake := newTestBreaker(t, retry.NTimes(3, 50*time.Millisecond))

	b.Handle(Connected)
	r.want(t, Connected)
	// The first Suspended goes through and opens the circuit.
	b.Handle(Suspended)
	r.want(t, Suspended)
	// Flapping while open is swallowed...
	for i := 0; i < 10; i++ {
		b.Handle(Reconnected)
		b.Handle(Suspended)
	}
	b.Handle(Reconnected)
	r.want(t)
	// ...until the policy's sleep runs out...
	fake.Advance(50*time.Millisecond - 1)
	r.want(t)
	// ...when the circuit closes and the settled state is reported once.
	if n := fake.Advance(1); n != 1 {
		t.Fatalf("%d timers ran at the end of the sleep, want 1", n)
	}
	r.want(t, Reconnected)
	if p := fake.Pending(); len(p) != 0 {
		t.Fatalf("timers still armed after the circuit closed: %v", p)
	}
	// Closed: states pass straight through again.
	b.Handle(Suspended)
	r.want(t, Suspended)
}

// Each sleep the circuit stays down for is the policy's next, asked with
// the retries so far and the time since the circuit opened.
func TestCircuitBreakerStaysOpenWhileDown(t *testing.T) {
	p := &askedPolicy{sleep: 50 * time.Millisecond, n: 3}
	b, r, fake := newTestBreaker(t, p)
	b.Handle(Suspended)
	r.want(t, Suspended)
	b.Handle(Reconnected)
	b.Handle(Suspended)
	fake.Advance(50 * time.Millisecond) // down: another sleep
	fake.Advance(50 * time.Millisecond) // down: another
	r.want(t)
	b.Handle(Reconnected)
	fake.Advance(50 * time.Millisecond) // up: closes
	r.want(t, Reconnected)
	want := []asked{{0, 0}, {1, 50 * time.Millisecond}, {2, 100 * time.Millisecond}}
	if len(p.asked) != len(want) {
		t.Fatalf("policy asked %v, want %v", p.asked, want)
	}
	for i := range want {
		if p.asked[i] != want[i] {
			t.Fatalf("policy asked %v, want %v", p.asked, want)
		}
	}
}

type asked struct {
	retries int
	elapsed time.Duration
}

// askedPolicy allows n retries of sleep each and records what it is asked.
type askedPolicy struct {
	sleep time.Duration
	n     int
	asked []asked
}

func (p *askedPolicy) AllowRetry(retries int, elapsed time.Duration) (time.Duration, bool) {
	p.asked = append(p.asked, asked{retries, elapsed})
	return p.sleep, retries < p.n
}

func TestCircuitBreakerForwardsLostWhileOpen(t *testing.T) {
	b, r, _ := newTestBreaker(t, retry.Forever(time.Hour))
	b.Handle(Suspended)
	r.want(t, Suspended)
	b.Handle(Lost)
	r.want(t, Lost) // forwarded while open
	b.Handle(Lost)
	r.want(t) // but once
}

func TestCircuitBreakerClosesWhenPolicyGivesUp(t *testing.T) {
	b, r, fake := newTestBreaker(t, retry.NTimes(1, 20*time.Millisecond))
	b.Handle(Suspended)
	r.want(t, Suspended)
	b.Handle(Reconnected)
	b.Handle(Suspended) // still down when the single sleep ends
	// Policy exhausted: the circuit closes and reports the last state only
	// if it differs from what was forwarded (Suspended): nothing here.
	if n := fake.Advance(20 * time.Millisecond); n != 1 {
		t.Fatalf("%d timers ran at the end of the sleep, want 1", n)
	}
	r.want(t)
	if p := fake.Pending(); len(p) != 0 {
		t.Fatalf("timers armed after the policy gave up: %v", p)
	}
	// Closed again: the next state passes straight through.
	b.Handle(Reconnected)
	r.want(t, Reconnected)
}

// Close disarms the timer, and states after it go nowhere.
func TestCircuitBreakerClose(t *testing.T) {
	b, r, fake := newTestBreaker(t, retry.NTimes(3, 50*time.Millisecond))
	b.Handle(Suspended)
	r.want(t, Suspended)
	b.Handle(Reconnected)
	b.Close()
	if p := fake.Pending(); len(p) != 0 {
		t.Fatalf("timers armed after Close: %v", p)
	}
	fake.Advance(time.Second)
	b.Handle(Lost)
	r.want(t)
}
