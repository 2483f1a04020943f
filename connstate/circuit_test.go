package connstate

import (
	"testing"
	"time"

	"github.com/gocurator/curator/retry"
)

func TestCircuitBreakerDampsFlapping(t *testing.T) {
	r := newRecorder()
	// Open for 3 × 50ms at most.
	b := NewCircuitBreaker(r.fn, retry.NTimes(3, 50*time.Millisecond))
	defer b.Close()

	b.Handle(Connected)
	if got := r.next(t); got != Connected {
		t.Fatalf("got %v, want Connected", got)
	}
	// The first Suspended goes through and opens the circuit.
	b.Handle(Suspended)
	if got := r.next(t); got != Suspended {
		t.Fatalf("got %v, want Suspended", got)
	}
	// Flapping while open is swallowed...
	for i := 0; i < 10; i++ {
		b.Handle(Reconnected)
		b.Handle(Suspended)
	}
	b.Handle(Reconnected)
	// ...and when the circuit closes, the settled state is reported once.
	if got := r.next(t); got != Reconnected {
		t.Fatalf("got %v, want Reconnected", got)
	}
	select {
	case s := <-r.got:
		t.Fatalf("unexpected extra state %v", s)
	case <-time.After(200 * time.Millisecond):
	}
}

func TestCircuitBreakerForwardsLostWhileOpen(t *testing.T) {
	r := newRecorder()
	b := NewCircuitBreaker(r.fn, retry.Forever(time.Hour))
	defer b.Close()
	b.Handle(Suspended)
	if got := r.next(t); got != Suspended {
		t.Fatalf("got %v", got)
	}
	b.Handle(Lost)
	if got := r.next(t); got != Lost {
		t.Fatalf("got %v, want Lost forwarded while open", got)
	}
	b.Handle(Lost)
	select {
	case s := <-r.got:
		t.Fatalf("Lost forwarded twice: %v", s)
	default:
	}
}

func TestCircuitBreakerClosesWhenPolicyGivesUp(t *testing.T) {
	r := newRecorder()
	b := NewCircuitBreaker(r.fn, retry.NTimes(1, 20*time.Millisecond))
	defer b.Close()
	b.Handle(Suspended)
	r.next(t)
	b.Handle(Reconnected)
	b.Handle(Suspended) // still down when the single sleep ends
	// Policy exhausted: the circuit closes and reports the last state only
	// if it differs from what was forwarded (Suspended): nothing here.
	select {
	case s := <-r.got:
		t.Fatalf("unexpected %v", s)
	case <-time.After(150 * time.Millisecond):
	}
	// Closed again: the next state passes straight through.
	b.Handle(Reconnected)
	if got := r.next(t); got != Reconnected {
		t.Fatalf("got %v", got)
	}
}
