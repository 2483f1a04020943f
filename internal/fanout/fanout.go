// Package fanout delivers values to listener functions in order, never
// dropping one and never blocking the publisher: each listener has an
// unbounded queue and a goroutine of its own. connstate.Listeners (states)
// and shared.Count (values) are built on it.
package fanout

import "sync"

// Fanout fans values of type T out to listeners. The zero value is ready to
// use.
type Fanout[T any] struct {
	mu     sync.Mutex
	next   int
	subs   map[int]*queue[T]
	live   map[*queue[T]]struct{} // listeners whose goroutine still runs
	closed bool
}

// Add registers fn and returns a function that unregisters it. Values
// published before Add are not delivered; values published after cancel are
// not delivered either, while values already queued still are. cancel never
// blocks and may be called from within fn. Add after Close, or with a nil
// fn, returns a no-op cancel.
func (f *Fanout[T]) Add(fn func(T)) (cancel func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || fn == nil {
		return func() {}
	}
	if f.subs == nil {
		f.subs = make(map[int]*queue[T])
	}
	id := f.next
	f.next++
	q := &queue[T]{wake: make(chan struct{}, 1), idle: make(chan struct{})}
	f.subs[id] = q
	if f.live == nil {
		f.live = make(map[*queue[T]]struct{})
	}
	f.live[q] = struct{}{}
	go func() {
		defer func() {
			f.mu.Lock()
			delete(f.live, q)
			f.mu.Unlock()
			q.exit()
		}()
		for range q.wake {
			items, closed := q.drain()
			for _, v := range items {
				q.setBusy(true)
				fn(v)
				q.setBusy(false)
			}
			if closed {
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			delete(f.subs, id)
			f.mu.Unlock()
			q.close()
		})
	}
}

// Publish queues v for every registered listener. It never blocks.
func (f *Fanout[T]) Publish(v T) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, q := range f.subs {
		q.push(v)
	}
}

// Close delivers what is queued and stops every listener goroutine. It
// waits for each goroutine to end, except one that is running its listener
// at the time: that one may be the caller (a listener may call Close, or a
// Close that calls this one), and it ends on its own once it has delivered
// what was queued before Close. So a slow listener never holds Close up.
func (f *Fanout[T]) Close() {
	f.mu.Lock()
	f.closed = true
	for id, q := range f.subs {
		q.close()
		delete(f.subs, id)
	}
	live := make([]*queue[T], 0, len(f.live))
	for q := range f.live {
		live = append(live, q)
	}
	f.mu.Unlock()
	for _, q := range live {
		q.waitIdleOrExit()
	}
}

// queue is an unbounded FIFO with a wake-up channel; push never blocks.
type queue[T any] struct {
	mu     sync.Mutex
	items  []T
	closed bool
	wake   chan struct{}
	busy   bool          // the listener is running
	exited bool          // the goroutine has ended
	idle   chan struct{} // closed and replaced when busy or exited change
}

func (q *queue[T]) setBusy(b bool) { q.change(func() { q.busy = b }) }

func (q *queue[T]) exit() { q.change(func() { q.exited = true }) }

// change applies f under the lock and wakes waitIdleOrExit.
func (q *queue[T]) change(f func()) {
	q.mu.Lock()
	f()
	close(q.idle)
	q.idle = make(chan struct{})
	q.mu.Unlock()
}

// waitIdleOrExit waits until the goroutine has ended or is running its
// listener.
func (q *queue[T]) waitIdleOrExit() {
	for {
		q.mu.Lock()
		done, ch := q.exited || q.busy, q.idle
		q.mu.Unlock()
		if done {
			return
		}
		<-ch
	}
}

func (q *queue[T]) push(v T) {
	q.mu.Lock()
	if !q.closed {
		q.items = append(q.items, v)
	}
	q.mu.Unlock()
	q.signal()
}

func (q *queue[T]) drain() ([]T, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	return items, q.closed
}

func (q *queue[T]) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

func (q *queue[T]) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}
