package cache

import "sync"

// listener delivers events to one function, in order, on a goroutine of
// its own. Its queue never blocks the cache: a listener slower than the
// changes gets, per path, the outcome of the changes it has not been
// given yet (see Event.Coalesced), so the queue holds at most two events
// per path (a deletion, then the creation that followed) and the
// markers: memory is bounded by the number of paths, not of changes.
type listener struct {
	fn   func(Event)
	wake chan struct{} // buffered: something was queued, or stop

	mu      sync.Mutex
	q       []*queued
	head    int
	dead    int                // entries of q[head:] that were taken back
	last    map[string]*queued // by path: the newest live entry
	stopped bool               // cancelled or closed: deliver no more
	busy    bool               // fn is running
	done    chan struct{}      // closed when the goroutine ends
}

type queued struct {
	ev   Event
	dead bool
	prev *queued // the older live entry of the same path, if any
}

func newListener(fn func(Event)) *listener {
	return &listener{fn: fn, wake: make(chan struct{}, 1), last: map[string]*queued{}, done: make(chan struct{})}
}

// push queues ev, coalescing it with the path's pending event. It never
// blocks.
func (l *listener) push(ev Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	switch ev.Type {
	case Created, Changed, Deleted:
		if old := l.last[ev.Path]; old != nil && l.merge(old, ev) {
			l.signal()
			return
		}
		e := &queued{ev: ev, prev: l.last[ev.Path]}
		l.last[ev.Path] = e
		l.q = append(l.q, e)
	case Resynced:
		// Back-to-back resyncs say one thing: the cache matches again.
		if n := len(l.q); n > l.head {
			if e := l.q[n-1]; !e.dead && e.ev.Type == Resynced {
				e.ev = ev
				l.signal()
				return
			}
		}
		l.q = append(l.q, &queued{ev: ev})
	default:
		l.q = append(l.q, &queued{ev: ev})
	}
	l.signal()
}

// merge folds ev into the pending entry old of the same path, and
// reports whether it did (false: ev is queued after old).
func (l *listener) merge(old *queued, ev Event) bool {
	switch {
	case old.ev.Type == Deleted:
		// A new incarnation: the listener hears of the deletion first.
		return false
	case ev.Type == Deleted && old.ev.Type == Created:
		// Created and gone before the listener heard of it.
		old.dead = true
		l.dead++
		if old.prev != nil {
			l.last[ev.Path] = old.prev
		} else {
			delete(l.last, ev.Path)
		}
		l.compact()
		return true
	case ev.Type == Deleted:
		old.ev = Event{Type: Deleted, Path: ev.Path, Node: ev.Node, Coalesced: true}
		return true
	default:
		// Created then Changed stays Created, with the latest node;
		// Changed then Changed keeps the first Old.
		old.ev.Node = ev.Node
		old.ev.Err = ev.Err
		old.ev.Coalesced = true
		return true
	}
}

// compact drops taken-back entries once they are the larger part of the
// queue, so that churn on a path does not grow it.
func (l *listener) compact() {
	if l.dead < 64 || l.dead < (len(l.q)-l.head)/2 {
		return
	}
	live := make([]*queued, 0, len(l.q)-l.head-l.dead)
	for _, e := range l.q[l.head:] {
		if !e.dead {
			live = append(live, e)
		}
	}
	l.q, l.head, l.dead = live, 0, 0
}

func (l *listener) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// next takes the oldest live event; ok false once stopped.
func (l *listener) next() (ev Event, ok, stopped bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return Event{}, false, true
	}
	for l.head < len(l.q) {
		e := l.q[l.head]
		l.q[l.head] = nil
		l.head++
		if e.dead {
			l.dead--
			continue
		}
		switch e.ev.Type {
		case Created, Changed, Deleted:
			if l.last[e.ev.Path] == e {
				delete(l.last, e.ev.Path)
			} else if n := l.last[e.ev.Path]; n != nil && n.prev == e {
				n.prev = nil
			}
		}
		if l.head == len(l.q) {
			l.q, l.head = l.q[:0], 0
		}
		l.busy = true
		return e.ev, true, false
	}
	l.q, l.head = l.q[:0], 0
	return Event{}, false, false
}

// run delivers events until stopped.
func (l *listener) run() {
	defer close(l.done)
	for {
		ev, ok, stopped := l.next()
		if stopped {
			return
		}
		if !ok {
			<-l.wake
			continue
		}
		l.fn(ev)
		l.mu.Lock()
		l.busy = false
		l.mu.Unlock()
	}
}

// stop ends delivery; events still queued are dropped. It reports
// whether the listener's function is running (so the goroutine ends
// only after it returns, and waiting for it from within fn would
// deadlock).
func (l *listener) stop() (running bool) {
	l.mu.Lock()
	l.stopped = true
	l.q, l.last = nil, nil
	running = l.busy
	l.mu.Unlock()
	l.signal()
	return running
}
