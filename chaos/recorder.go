package chaos

import (
	"sync"
	"time"
)

// recorder collects a run's history and counters; safe for concurrent use.
type recorder struct {
	mu        sync.Mutex
	h         History
	acquired  map[string]int
	failed    map[string]int
	accepted  map[string]int
	rejected  map[string]int
	lastMutex time.Time
}

func newRecorder(start time.Time) *recorder {
	return &recorder{
		h:        History{Start: start},
		acquired: map[string]int{},
		failed:   map[string]int{},
		accepted: map[string]int{},
		rejected: map[string]int{},
	}
}

func (r *recorder) acquireFailed(recipe string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed[recipe]++
}

func (r *recorder) hold(iv Interval) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acquired[iv.Recipe]++
	r.h.Intervals = append(r.h.Intervals, iv)
	if iv.Recipe == RecipeMutex && iv.Start.After(r.lastMutex) {
		r.lastMutex = iv.Start
	}
}

// mutexAcquired records an acquisition's start as soon as Acquire returns,
// so the fault loop can wait for progress without waiting for the release.
func (r *recorder) mutexAcquired(at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if at.After(r.lastMutex) {
		r.lastMutex = at
	}
}

func (r *recorder) lastMutexStart() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastMutex
}

func (r *recorder) write(w Write, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.rejected[w.Recipe]++
		return
	}
	r.accepted[w.Recipe]++
	r.h.Writes = append(r.h.Writes, w)
}

func (r *recorder) fault(f Fault) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.h.Faults = append(r.h.Faults, f)
}

func (r *recorder) history(end time.Time) History {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.h
	h.End = end
	h.Intervals = append([]Interval(nil), r.h.Intervals...)
	h.Writes = append([]Write(nil), r.h.Writes...)
	h.Faults = append([]Fault(nil), r.h.Faults...)
	return h
}
