package connstate

import "sync"

// queue is an unbounded FIFO of states with a wake-up channel; push never
// blocks, so the producer (the client's event goroutine) is never held up by
// a slow consumer.
type queue struct {
	mu     sync.Mutex
	items  []State
	wake   chan struct{}
	closed bool
}

func newQueue() *queue { return &queue{wake: make(chan struct{}, 1)} }

func (q *queue) push(s State) {
	q.mu.Lock()
	if !q.closed {
		q.items = append(q.items, s)
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// drain returns the queued states, and whether the queue was closed.
func (q *queue) drain() ([]State, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	return items, q.closed
}

func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}
