package semaphore

import "sync"

// wake is a re-armable broadcast: channel returns a channel that the next
// fire closes; fire then arms a new one.
type wake struct {
	mu sync.Mutex
	ch chan struct{}
}

func newWake() *wake { return &wake{ch: make(chan struct{})} }

func (w *wake) channel() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ch
}

func (w *wake) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	close(w.ch)
	w.ch = make(chan struct{})
}

// either returns a channel closed when a or b closes; b may be nil. done
// ends the wait without closing it, so the goroutine never outlives done.
func either(a, b, done <-chan struct{}) <-chan struct{} {
	if b == nil {
		return a
	}
	out := make(chan struct{})
	go func() {
		select {
		case <-a:
		case <-b:
		case <-done:
			return
		}
		close(out)
	}()
	return out
}
