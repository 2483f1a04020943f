package shared

import "sync"

// listeners fans values out to listener functions: each listener sees every
// value published after it was added, in order, on a goroutine of its own,
// so a slow listener holds up neither the count nor other listeners.
type listeners struct {
	mu     sync.Mutex
	next   int
	subs   map[int]*queue
	closed bool
	wg     sync.WaitGroup
}

func (l *listeners) add(fn func(int)) (cancel func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || fn == nil {
		return func() {}
	}
	if l.subs == nil {
		l.subs = make(map[int]*queue)
	}
	id := l.next
	l.next++
	q := &queue{wake: make(chan struct{}, 1)}
	l.subs[id] = q
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
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
			l.mu.Lock()
			delete(l.subs, id)
			l.mu.Unlock()
			q.close()
		})
	}
}

func (l *listeners) publish(v int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, q := range l.subs {
		q.push(v)
	}
}

// close delivers what is queued, then stops every listener goroutine and
// waits for them. It must not be called from a listener.
func (l *listeners) close() {
	l.mu.Lock()
	l.closed = true
	for id, q := range l.subs {
		q.close()
		delete(l.subs, id)
	}
	l.mu.Unlock()
	l.wg.Wait()
}

// queue is an unbounded FIFO with a wake-up channel; push never blocks.
type queue struct {
	mu     sync.Mutex
	items  []int
	closed bool
	wake   chan struct{}
}

func (q *queue) push(v int) {
	q.mu.Lock()
	if !q.closed {
		q.items = append(q.items, v)
	}
	q.mu.Unlock()
	q.signal()
}

func (q *queue) drain() ([]int, bool) {
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
	q.signal()
}

func (q *queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}
