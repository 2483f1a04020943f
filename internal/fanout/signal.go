package fanout

import "sync"

// Signal broadcasts "something changed" to any number of waiters: C returns
// a channel that the next Notify closes, after which C returns a new one.
// A reader that takes C and then reads the state the signal guards (under
// the same lock as the writer that changes it and calls Notify) never misses
// a change. Close closes the current channel for good. The zero Signal is
// ready; it makes a channel only when somebody asks for one. Safe for
// concurrent use.
type Signal struct {
	mu     sync.Mutex
	ch     chan struct{}
	closed bool
}

// C returns the channel the next Notify (or Close) closes.
func (s *Signal) C() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
		if s.closed {
			close(s.ch)
		}
	}
	return s.ch
}

// Notify wakes every waiter on the channel C returned until now.
func (s *Signal) Notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// Close wakes every waiter, and every later C returns a closed channel.
func (s *Signal) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	if s.ch != nil {
		close(s.ch)
	} else {
		s.ch = make(chan struct{})
		close(s.ch)
	}
}

// closedCh is the one channel Closed returns.
var closedCh = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// Closed returns a closed channel: the Done of something that has ended
// or never began (a nil handle's, say).
func Closed() <-chan struct{} { return closedCh }
