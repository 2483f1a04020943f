package chaos

import (
	"sync"
	"time"
)

// recorder collects a run's history and counters; safe for concurrent use.
type recorder struct {
	mu       sync.Mutex
	h        History
	acquired map[string]int
	failed   map[string]int
	accepted map[string]int
	rejected map[string]int
	last     map[progressKey]time.Time // latest start, by workload and progress recipe
	next     map[string][]chan int     // lock path -> waiting for its next holder
}

func newRecorder(start time.Time, workloads ...string) *recorder {
	return &recorder{
		h:        History{Start: start, Workloads: workloads},
		acquired: map[string]int{},
		failed:   map[string]int{},
		accepted: map[string]int{},
		rejected: map[string]int{},
		last:     map[progressKey]time.Time{},
		next:     map[string][]chan int{},
	}
}

func (r *recorder) acquireFailed(recipe string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed[recipe]++
}

// acquiredAt records a hold's start as soon as Acquire returns, so the
// fault loop can wait for progress without waiting for the release, and
// can aim a fault at a fresh holder.
func (r *recorder) acquiredAt(iv Interval) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.progressed(iv)
	for _, ch := range r.next[iv.Lock] {
		ch <- iv.Client
	}
	delete(r.next, iv.Lock)
}

// nextHolder returns a channel that receives the client of lock's next
// acquisition.
func (r *recorder) nextHolder(lock string) <-chan int {
	r.mu.Lock()
	defer r.mu.Unlock()
	ch := make(chan int, 1)
	r.next[lock] = append(r.next[lock], ch)
	return ch
}

func (r *recorder) hold(iv Interval) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acquired[iv.Recipe]++
	r.h.Intervals = append(r.h.Intervals, iv)
	r.progressed(iv)
}

// progressKey names a lock whose progress is judged: a workload's mutex or
// election.
type progressKey struct{ workload, recipe string }

// progressed notes iv's start if its recipe's progress is judged; r.mu held.
func (r *recorder) progressed(iv Interval) {
	if !progressRecipes[iv.Recipe] {
		return
	}
	k := progressKey{iv.Workload, iv.Recipe}
	if iv.Start.After(r.last[k]) {
		r.last[k] = iv.Start
	}
}

// progressSince reports whether every workload's mutex was acquired, and
// its election had a term start, at or after t.
func (r *recorder) progressSince(t time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range r.h.Workloads {
		for recipe := range progressRecipes {
			if r.last[progressKey{w, recipe}].Before(t) {
				return false
			}
		}
	}
	return true
}

// lastMutexStart returns the latest start of a mutex hold in any workload.
func (r *recorder) lastMutexStart() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	var last time.Time
	for k, t := range r.last {
		if k.recipe == RecipeMutex && t.After(last) {
			last = t
		}
	}
	return last
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

func (r *recorder) grantCut(g GrantCut) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.h.GrantCuts = append(r.h.GrantCuts, g)
}

func (r *recorder) execRound(e ExecRound) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.h.ExecRounds = append(r.h.ExecRounds, e)
}

func (r *recorder) history(end time.Time) History {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.h
	h.End = end
	h.Workloads = append([]string(nil), r.h.Workloads...)
	h.Intervals = append([]Interval(nil), r.h.Intervals...)
	h.Writes = append([]Write(nil), r.h.Writes...)
	h.Faults = append([]Fault(nil), r.h.Faults...)
	h.GrantCuts = append([]GrantCut(nil), r.h.GrantCuts...)
	h.ExecRounds = append([]ExecRound(nil), r.h.ExecRounds...)
	return h
}
