package connstate

import "sync"

// Listeners fans states out to listener functions. Every listener sees every
// published state, in order, on a goroutine of its own; Publish never blocks.
// The zero value is not usable; use NewListeners.
type Listeners struct {
	mu     sync.Mutex
	next   int
	subs   map[int]*queue
	closed bool
	wg     sync.WaitGroup
}

// NewListeners returns an empty fan-out.
func NewListeners() *Listeners {
	return &Listeners{subs: make(map[int]*queue)}
}

// Add registers fn and returns a function that unregisters it. States
// published before Add are not delivered; states published after cancel are
// not delivered either, while states already queued still are. cancel never
// blocks and may be called from within fn; the listener's goroutine ends once
// its queue is drained. Add on closed Listeners returns a no-op cancel and
// never calls fn.
func (l *Listeners) Add(fn func(State)) (cancel func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || fn == nil {
		return func() {}
	}
	id := l.next
	l.next++
	q := newQueue()
	l.subs[id] = q
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		deliver(q, fn)
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

func deliver(q *queue, fn func(State)) {
	for range q.wake {
		items, closed := q.drain()
		for _, s := range items {
			fn(s)
		}
		if closed {
			return
		}
	}
}

// Publish queues s for every registered listener. It never blocks.
func (l *Listeners) Publish(s State) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, q := range l.subs {
		q.push(s)
	}
}

// Close delivers what is queued, stops every listener goroutine and waits
// for them. Listeners must not call Close.
func (l *Listeners) Close() {
	l.mu.Lock()
	l.closed = true
	for id, q := range l.subs {
		q.close()
		delete(l.subs, id)
	}
	l.mu.Unlock()
	l.wg.Wait()
}
