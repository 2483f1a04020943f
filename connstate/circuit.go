package connstate

import (
	"sync"
	"time"

	"github.com/gocurator/curator/internal/clock"
	"github.com/gocurator/curator/retry"
)

// CircuitBreaker damps Suspended/Reconnected flapping before it reaches a
// listener (Curator 4.2's CircuitBreakingConnectionStateListener).
//
// While the circuit is closed every state is forwarded. The first error state
// (Suspended or Lost) is forwarded and opens the circuit. While open, states
// are only remembered, except that a Lost is always forwarded (once) because
// it means the session is gone. Each time the policy's sleep runs out, the
// breaker looks at the last remembered state: a connected state closes the
// circuit and is forwarded; an error state keeps the circuit open for the
// policy's next sleep; when the policy allows no more retries the circuit
// closes and the last state is forwarded if it differs from the last one
// forwarded.
type CircuitBreaker struct {
	callMu    sync.Mutex // one listener call at a time, in order
	mu        sync.Mutex
	listener  func(State)
	policy    retry.Policy
	clock     clock.Clock // the policy's sleeps and elapsed time; tests set a fake
	open      bool
	retries   int
	openedAt  time.Time
	last      State // last state seen
	forwarded State // last state forwarded
	timer     clock.Timer
	closed    bool
}

// NewCircuitBreaker wraps listener. Register the breaker's Handle method with
// a client's Listen. Close stops its timer.
func NewCircuitBreaker(listener func(State), p retry.Policy) *CircuitBreaker {
	return &CircuitBreaker{listener: listener, policy: p, clock: clock.Real}
}

// Handle takes the next state. It runs the wrapped listener synchronously
// when the state is forwarded.
func (b *CircuitBreaker) Handle(s State) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.last = s
	forward := false
	switch {
	case !b.open:
		forward = true
		if !s.IsConnected() {
			b.openLocked()
		}
	case s == Lost && b.forwarded != Lost:
		forward = true
	}
	if forward {
		b.forwarded = s
	}
	b.mu.Unlock()
	if forward {
		b.call(s)
	}
}

func (b *CircuitBreaker) call(s State) {
	b.callMu.Lock()
	defer b.callMu.Unlock()
	b.listener(s)
}

func (b *CircuitBreaker) openLocked() {
	b.open = true
	b.retries = 0
	b.openedAt = b.clock.Now()
	b.scheduleLocked()
}

// scheduleLocked arms the timer for the policy's next sleep, or closes the
// circuit when the policy allows no more.
func (b *CircuitBreaker) scheduleLocked() bool {
	sleep, ok := b.policy.AllowRetry(b.retries, b.clock.Now().Sub(b.openedAt))
	if !ok {
		b.open = false
		return false
	}
	b.retries++
	b.timer = b.clock.AfterFunc(sleep, b.check)
	return true
}

func (b *CircuitBreaker) check() {
	b.mu.Lock()
	if b.closed || !b.open {
		b.mu.Unlock()
		return
	}
	if !b.last.IsConnected() && b.scheduleLocked() {
		b.mu.Unlock()
		return
	}
	b.open = false
	s := b.last
	forward := s != b.forwarded
	if forward {
		b.forwarded = s
	}
	b.mu.Unlock()
	if forward {
		b.call(s)
	}
}

// Close stops the breaker's timer; later states are ignored.
func (b *CircuitBreaker) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	if b.timer != nil {
		b.timer.Stop()
	}
}
