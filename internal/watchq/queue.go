// Package watchq is the queue of a Watcher's pending events, between the
// goroutine that produces them (go-zookeeper's receive goroutine, which
// must never block) and the one that hands them to a consumer that may be
// slow. Memory is bounded by the number of names (paths) pending, not by
// the number of changes, and nothing is dropped:
//
//   - Add coalesces an event with the pending one of its name: the
//     coalesced event takes the place of the last event it stands for, at
//     the end (left at the first's place it would jump ahead of events
//     queued in between, a parent's deletion ahead of its child's).
//   - Merge (the resync marker) keeps the first's place instead: the
//     consumer reads everything again when it gets it.
//   - Mark queues a barrier (a Sync marker): events added after it never
//     coalesce with those before it, so none moves behind it.
//
// The queue knows nothing of the events it holds: the Watcher says how
// two of them combine.
package watchq

import "sync"

// Queue holds pending events of type E. Its methods are safe for
// concurrent use.
type Queue[E any] struct {
	coalesce, merge func(old, cur E) E

	wake chan struct{} // buffered: an event was queued

	mu      sync.Mutex
	order   []place           // places of pending events, oldest first
	dead    int               // places in order whose event moved on
	seq     uint64            // the last place given
	epoch   uint64            // marks queued: see key
	marks   uint64            // the last mark's number
	pending map[key]*entry[E] // by name (and epoch), merged names, marks
}

// key is the key of a pending event. An added event's is its name and the
// number of marks queued before it: a name's events coalesce within an
// epoch only. A merged event's has no epoch; a mark's is its number.
type key struct {
	name  string
	epoch uint64
	kind  uint8
}

const (
	added uint8 = iota
	merged
	marked
)

// place is a place in the queue: the event of key whose seq it is; a
// place whose event has moved on (coalesced, queued later) is skipped.
type place struct {
	key key
	seq uint64
}

type entry[E any] struct {
	ev       E
	seq      uint64
	received chan struct{} // a mark's: closed by the caller once handed over
}

// New returns an empty queue. coalesce(old, cur) is the event Add keeps
// when cur's name has old pending; merge(old, cur) the one Merge keeps.
func New[E any](coalesce, merge func(old, cur E) E) *Queue[E] {
	return &Queue[E]{coalesce: coalesce, merge: merge, wake: make(chan struct{}, 1), pending: map[key]*entry[E]{}}
}

// Wake returns a channel that receives after an event is queued: the
// consumer's goroutine calls Next again then.
func (q *Queue[E]) Wake() <-chan struct{} { return q.wake }

func (q *Queue[E]) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Add queues ev under name, coalescing it with the event of name pending
// since the last mark, if any, at the end of the queue. It never blocks.
func (q *Queue[E]) Add(name string, ev E) {
	q.mu.Lock()
	k := key{name: name, epoch: q.epoch, kind: added}
	q.seq++
	if p := q.pending[k]; p != nil {
		p.ev = q.coalesce(p.ev, ev)
		p.seq = q.seq
		q.dead++
	} else {
		q.pending[k] = &entry[E]{ev: ev, seq: q.seq}
	}
	q.order = append(q.order, place{k, q.seq})
	q.compactLocked()
	q.mu.Unlock()
	q.signal()
}

// Merge queues ev under name, or, when an event of name is pending
// (whatever the marks queued since), merges it into that one, in its
// place. It never blocks.
func (q *Queue[E]) Merge(name string, ev E) {
	q.mu.Lock()
	k := key{name: name, kind: merged}
	if p := q.pending[k]; p != nil {
		p.ev = q.merge(p.ev, ev)
	} else {
		q.seq++
		q.pending[k] = &entry[E]{ev: ev, seq: q.seq}
		q.order = append(q.order, place{k, q.seq})
		q.compactLocked()
	}
	q.mu.Unlock()
	q.signal()
}

// Mark queues ev as a barrier, and returns the channel that Next hands
// back with it, for the caller to close once ev is received. Events added
// after it do not coalesce with those before.
func (q *Queue[E]) Mark(ev E) (received chan struct{}) {
	received = make(chan struct{})
	q.mu.Lock()
	q.marks++
	k := key{epoch: q.marks, kind: marked}
	q.seq++
	q.pending[k] = &entry[E]{ev: ev, seq: q.seq, received: received}
	q.order = append(q.order, place{k, q.seq})
	q.epoch++
	q.mu.Unlock()
	q.signal()
	return received
}

// compactLocked drops the places of events that moved on once they are
// the larger part of the queue: the queue stays within twice the pending
// events (and 64), whatever the number of changes.
func (q *Queue[E]) compactLocked() {
	if q.dead < 64 || q.dead < len(q.order)/2 {
		return
	}
	live := make([]place, 0, len(q.order)-q.dead)
	for _, pl := range q.order {
		if p := q.pending[pl.key]; p != nil && p.seq == pl.seq {
			live = append(live, pl)
		}
	}
	q.order, q.dead = live, 0
}

// Next takes the oldest pending event, with a mark's received channel
// (nil for other events); ok is false when nothing is pending.
func (q *Queue[E]) Next() (ev E, received chan struct{}, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var k key
	for {
		if len(q.order) == 0 {
			q.order, q.dead = nil, 0 // let the array go
			return ev, nil, false
		}
		pl := q.order[0]
		q.order[0] = place{}
		q.order = q.order[1:]
		if p := q.pending[pl.key]; p != nil && p.seq == pl.seq {
			k = pl.key
			break
		}
		q.dead--
	}
	if len(q.order) == 0 {
		q.order = nil
	}
	p := q.pending[k]
	delete(q.pending, k)
	return p.ev, p.received, true
}

// Len returns the number of events pending.
func (q *Queue[E]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending)
}

// Places returns the number of places in the queue, pending events and
// those moved on not yet dropped: at most 2*Len()+64.
func (q *Queue[E]) Places() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.order)
}

// Has reports whether an event added under name since the last mark is
// pending.
func (q *Queue[E]) Has(name string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pending[key{name: name, epoch: q.epoch, kind: added}] != nil
}
