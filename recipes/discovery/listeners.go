package discovery

import "sync"

// latestListeners hands a ServiceCache's instance lists to its listeners,
// each on a goroutine of its own so that a slow or blocked listener holds
// up nobody else (not the cache's event goroutine, not other listeners).
// Each listener has at most one list waiting: a newer list replaces the
// one it has not taken yet, since every list is the whole service (as
// Curator's cacheChanged carries no list at all: it says "look again").
// So a blocked listener costs one list, however many changes pass, and
// the lists a listener gets are in the order they were made.
type latestListeners struct {
	mu     sync.Mutex
	subs   map[*latestSub]struct{}
	closed bool
}

// latestSub is one listener and its one waiting list.
type latestSub struct {
	fn   func([]Instance)
	wake chan struct{} // capacity 1: a list waits, or the sub ended

	mu      sync.Mutex
	next    func() []Instance // makes the list waiting to be delivered
	waiting bool              // a list waits, not yet delivered
	ended   bool              // cancelled or closed: deliver nothing more
}

// add registers fn; cancel unregisters it, never blocks and may be called
// from fn. After close, or with a nil fn, it registers nothing.
func (l *latestListeners) add(fn func([]Instance)) (cancel func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || fn == nil {
		return func() {}
	}
	if l.subs == nil {
		l.subs = map[*latestSub]struct{}{}
	}
	s := &latestSub{fn: fn, wake: make(chan struct{}, 1)}
	l.subs[s] = struct{}{}
	go s.run()
	return func() {
		l.mu.Lock()
		delete(l.subs, s)
		l.mu.Unlock()
		s.end()
	}
}

// publish hands list to every listener, replacing a list one has not
// taken yet. It never blocks on a listener.
func (l *latestListeners) publish(list []Instance) {
	l.publishFunc(func() []Instance { return list })
}

// publishFunc is publish of the list get makes, which each listener's
// goroutine calls when it takes the list, without any lock of l held: a
// list is made only when a listener is ready for it, however many
// changes came meanwhile. It never blocks on a listener.
func (l *latestListeners) publishFunc(get func() []Instance) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for s := range l.subs {
		s.mu.Lock()
		s.next, s.waiting = get, true
		s.mu.Unlock()
		s.signal()
	}
}

// close ends every listener: lists not yet taken are dropped (the cache
// that made them is closed), and each goroutine ends at once, or when its
// running listener returns. It does not wait for them: the caller may be
// a listener.
func (l *latestListeners) close() {
	l.mu.Lock()
	subs := l.subs
	l.subs, l.closed = nil, true
	l.mu.Unlock()
	for s := range subs {
		s.end()
	}
}

// pending reports how many lists wait for the listeners (tests: the bound).
func (l *latestListeners) pending() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for s := range l.subs {
		s.mu.Lock()
		if s.waiting {
			n++
		}
		s.mu.Unlock()
	}
	return n
}

func (s *latestSub) end() {
	s.mu.Lock()
	s.ended, s.next, s.waiting = true, nil, false
	s.mu.Unlock()
	s.signal()
}

func (s *latestSub) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// run delivers the waiting list until the sub ends. A wake-up only says
// "look again": the state under s.mu decides.
func (s *latestSub) run() {
	for {
		s.mu.Lock()
		for !s.waiting && !s.ended {
			s.mu.Unlock()
			<-s.wake
			s.mu.Lock()
		}
		if s.ended {
			s.mu.Unlock()
			return
		}
		get := s.next
		s.next, s.waiting = nil, false
		s.mu.Unlock()
		s.fn(get())
	}
}
