// Package mailbox is an unbounded queue between senders that must never
// block nor drop (go-zookeeper's event callback, which runs on its
// receive goroutine) and one receiver that takes everything queued at
// once. framework's event goroutine reads the connection's events from
// one.
package mailbox

import "sync"

// Mailbox holds the values sent and not yet taken. Its methods are safe for
// concurrent use; use New to make one.
type Mailbox[T any] struct {
	mu    sync.Mutex
	items []T
	wake  chan struct{}
}

// New returns an empty mailbox.
func New[T any]() *Mailbox[T] { return &Mailbox[T]{wake: make(chan struct{}, 1)} }

// Send queues v. It never blocks.
func (m *Mailbox[T]) Send(v T) {
	m.mu.Lock()
	m.items = append(m.items, v)
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// Wake returns a channel that receives after a Send: the receiver calls
// Take then. One receive may stand for several sends.
func (m *Mailbox[T]) Wake() <-chan struct{} { return m.wake }

// Take returns every value queued, oldest first, and empties the mailbox.
func (m *Mailbox[T]) Take() []T {
	m.mu.Lock()
	defer m.mu.Unlock()
	items := m.items
	m.items = nil
	return items
}
