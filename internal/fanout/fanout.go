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
	closed bool
	wg     sync.WaitGroup
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
	q := &queue[T]{wake: make(chan struct{}, 1)}
	f.subs[id] = q
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for range q.wake {
			items, closed := q.drain()
			for _, v := range items {
				fn(v)
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

// Close delivers what is queued, stops every listener goroutine and waits
// for them. Listeners must not call Close.
func (f *Fanout[T]) Close() {
	f.mu.Lock()
	f.closed = true
	for id, q := range f.subs {
		q.close()
		delete(f.subs, id)
	}
	f.mu.Unlock()
	f.wg.Wait()
}

// queue is an unbounded FIFO with a wake-up channel; push never blocks.
type queue[T any] struct {
	mu     sync.Mutex
	items  []T
	closed bool
	wake   chan struct{}
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
