package cache

import "sync"

// listener delivers events to one function, in order, on a goroutine of
// its own. Its queue never blocks the cache: a listener slower than the
// changes gets, per path, the outcome of the changes it has not been
// given yet (see Event.Coalesced), so the queue holds at most two events
// per path (a deletion, then the creation or the Unreadable report that
// followed) and two markers (Initialized once, and the latest Resynced):
// memory is bounded by the number of paths, not of changes or of
// reconnections.
//
// Coalescing keeps the order a tree's mirror needs: an entry merged in
// place is only ever a creation (which must stay ahead of its
// descendants' creations) taking a later data; a merge that makes an
// entry stand for a later deletion, change, report or resync moves it to
// the end of the queue, behind the events of its descendants that came
// before (a subtree leaves deepest first).
type listener struct {
	fn   func(Event)
	wake chan struct{} // buffered: something was queued, or stop

	mu      sync.Mutex
	q       []*queued
	head    int
	dead    int                // entries of q[head:] that were taken back
	last    map[string]*queued // by path: the newest live entry
	resync  *queued            // the pending Resynced, if any
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
	case Created, Changed, Deleted, Unreadable:
		if old := l.last[ev.Path]; old != nil {
			var merged bool
			if ev, merged = l.merge(old, ev); merged {
				l.signal()
				return
			}
		}
		e := &queued{ev: ev, prev: l.last[ev.Path]}
		l.last[ev.Path] = e
		l.q = append(l.q, e)
	case Resynced:
		// Resyncs say one thing: the cache matches again. The pending
		// one is taken back and this one queued last, behind what the
		// resync found; a new session is not forgotten.
		if old := l.resync; old != nil {
			if old.ev.Reason == NewSession {
				ev.Reason = NewSession
			}
			l.takeBack(old)
		}
		l.resync = &queued{ev: ev}
		l.q = append(l.q, l.resync)
	default:
		l.q = append(l.q, &queued{ev: ev})
	}
	l.signal()
}

// merge folds ev into the pending entry old of the same path. It
// reports true if ev was absorbed; else ev (maybe rewritten) is to be
// queued last, after old's older entry if old was taken back.
func (l *listener) merge(old *queued, ev Event) (Event, bool) {
	switch {
	case old.ev.Type == Deleted:
		// A new incarnation (or a report): heard after the deletion.
		return ev, false
	case old.ev.Type == Unreadable:
		// The report is superseded by what the node is now; the older
		// entry (a deletion) stays ahead.
		l.unlink(old)
		if ev.Type == Unreadable {
			return ev, false
		}
		if p := l.last[ev.Path]; p != nil {
			return l.merge(p, ev)
		}
		return ev, false
	case ev.Type == Deleted && old.ev.Type == Created:
		// Created and gone before the listener heard of it.
		l.unlink(old)
		return ev, true
	case ev.Type == Deleted:
		// Changed, then gone: the deletion, queued last so that it
		// follows its descendants' deletions queued meanwhile.
		l.unlink(old)
		return Event{Type: Deleted, Path: ev.Path, Node: ev.Node, Coalesced: true}, false
	case old.ev.Type == Created:
		// Created then Changed stays Created, in place (ahead of its
		// children's creations), with the latest node.
		old.ev.Node = ev.Node
		old.ev.Err = ev.Err
		old.ev.Coalesced = true
		return ev, true
	default:
		// Changed then Changed: one change, keeping the first Old,
		// queued last (the later data).
		l.unlink(old)
		ev.Old = old.ev.Old
		ev.Coalesced = true
		return ev, false
	}
}

// unlink takes back old, the newest entry of its path.
func (l *listener) unlink(old *queued) {
	if old.prev != nil {
		l.last[old.ev.Path] = old.prev
	} else {
		delete(l.last, old.ev.Path)
	}
	l.takeBack(old)
}

// takeBack marks e dead; next skips it and compact drops it.
func (l *listener) takeBack(e *queued) {
	e.dead = true
	l.dead++
	l.compact()
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
		if e == l.resync {
			l.resync = nil
		}
		switch e.ev.Type {
		case Created, Changed, Deleted, Unreadable:
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
	l.q, l.last, l.resync = nil, nil, nil
	running = l.busy
	l.mu.Unlock()
	l.signal()
	return running
}
