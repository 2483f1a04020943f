package chaos

import (
	"fmt"
	"sort"
	"time"
)

// Violation kinds.
const (
	ViolationMutex     = "mutex-overlap"
	ViolationSemaphore = "semaphore-overlap"
	ViolationRWLock    = "rwlock-overlap"
	ViolationFencing   = "fencing-order"
	ViolationProgress  = "progress"
	ViolationEndState  = "end-state"
)

// Violation is one broken guarantee.
type Violation struct {
	Kind   string
	At     time.Duration // since the run's start
	Detail string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s at %v: %s", v.Kind, v.At.Round(time.Millisecond), v.Detail)
}

// Check judges h: mutual exclusion on the recorded intervals, fencing order
// of the accepted writes, and progress (a mutex acquisition starts within
// bound of every fault's heal). It does no I/O.
func Check(h History, bound time.Duration) []Violation {
	var vs []Violation
	vs = append(vs, checkLimit(h, RecipeMutex, 1, ViolationMutex)...)
	vs = append(vs, checkLimit(h, RecipeSemaphore, 2, ViolationSemaphore)...)
	vs = append(vs, checkRW(h)...)
	vs = append(vs, checkFencing(h, RecipeMutex)...)
	vs = append(vs, checkFencing(h, RecipeWrite)...)
	vs = append(vs, checkProgress(h, bound)...)
	return vs
}

type event struct {
	at    time.Time
	start bool
	iv    *Interval
}

// events returns the starts and ends of the intervals of the given recipes in
// time order; at equal times ends come first, so touching holds do not
// overlap.
func events(h History, recipes ...string) []event {
	var evs []event
	for i := range h.Intervals {
		iv := &h.Intervals[i]
		for _, r := range recipes {
			if iv.Recipe == r {
				end := iv.End
				if end.Before(iv.Start) {
					end = iv.Start
				}
				evs = append(evs, event{iv.Start, true, iv}, event{end, false, iv})
			}
		}
	}
	sort.SliceStable(evs, func(i, j int) bool {
		if !evs[i].at.Equal(evs[j].at) {
			return evs[i].at.Before(evs[j].at)
		}
		return !evs[i].start && evs[j].start
	})
	return evs
}

func holders(open map[*Interval]bool) []string {
	var hs []string
	for iv := range open {
		hs = append(hs, iv.Holder)
	}
	sort.Strings(hs)
	return hs
}

func checkLimit(h History, recipe string, limit int, kind string) []Violation {
	var vs []Violation
	open := map[*Interval]bool{}
	for _, e := range events(h, recipe) {
		if !e.start {
			delete(open, e.iv)
			continue
		}
		open[e.iv] = true
		if len(open) > limit {
			vs = append(vs, Violation{kind, e.at.Sub(h.Start),
				fmt.Sprintf("%d holders at once (max %d): %v", len(open), limit, holders(open))})
		}
	}
	return vs
}

func checkRW(h History) []Violation {
	var vs []Violation
	open := map[*Interval]bool{}
	readers, writers := 0, 0
	for _, e := range events(h, RecipeRead, RecipeWrite) {
		d := 1
		if !e.start {
			d = -1
		}
		if e.iv.Recipe == RecipeRead {
			readers += d
		} else {
			writers += d
		}
		if !e.start {
			delete(open, e.iv)
			continue
		}
		open[e.iv] = true
		if writers > 1 || (writers == 1 && readers > 0) {
			vs = append(vs, Violation{ViolationRWLock, e.at.Sub(h.Start),
				fmt.Sprintf("%d writers and %d readers at once: %v", writers, readers, holders(open))})
		}
	}
	return vs
}

func checkFencing(h History, recipe string) []Violation {
	var ws []Write
	for _, w := range h.Writes {
		if w.Recipe == recipe {
			ws = append(ws, w)
		}
	}
	sort.Slice(ws, func(i, j int) bool { return ws[i].Version < ws[j].Version })
	var vs []Violation
	for i := 1; i < len(ws); i++ {
		if ws[i].Token <= ws[i-1].Token {
			vs = append(vs, Violation{ViolationFencing, 0,
				fmt.Sprintf("%s: version %d token %d (%s) after version %d token %d (%s)", recipe,
					ws[i].Version, ws[i].Token, ws[i].Holder, ws[i-1].Version, ws[i-1].Token, ws[i-1].Holder)})
		}
	}
	return vs
}

// Recovery is how long the mutex took to be acquired again after a fault
// healed; Acquired is false when it was not acquired before the run ended.
type Recovery struct {
	Fault    Fault
	Acquired bool
	After    time.Duration
}

// Recoveries returns, for every fault of h, the time from its heal to the
// start of the next mutex acquisition.
func Recoveries(h History) []Recovery {
	starts := mutexStarts(h)
	var rs []Recovery
	for _, f := range h.Faults {
		i := sort.Search(len(starts), func(i int) bool { return !starts[i].Before(f.Heal) })
		r := Recovery{Fault: f}
		if i < len(starts) {
			r.Acquired, r.After = true, starts[i].Sub(f.Heal)
		}
		rs = append(rs, r)
	}
	return rs
}

func mutexStarts(h History) []time.Time {
	var starts []time.Time
	for _, iv := range h.Intervals {
		if iv.Recipe == RecipeMutex {
			starts = append(starts, iv.Start)
		}
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i].Before(starts[j]) })
	return starts
}

// LongestStall returns the longest time between mutex acquisitions (counting
// the run's start and end).
func LongestStall(h History) time.Duration {
	prev := h.Start
	var longest time.Duration
	for _, s := range append(mutexStarts(h), h.End) {
		if d := s.Sub(prev); d > longest {
			longest = d
		}
		if s.After(prev) {
			prev = s
		}
	}
	return longest
}

func checkProgress(h History, bound time.Duration) []Violation {
	var vs []Violation
	for _, r := range Recoveries(h) {
		switch {
		case r.Acquired && r.After > bound:
			vs = append(vs, Violation{ViolationProgress, r.Fault.Heal.Sub(h.Start),
				fmt.Sprintf("after %s (%s): first mutex acquisition %v after heal (bound %v)",
					r.Fault.Kind, r.Fault.Detail, r.After.Round(time.Millisecond), bound)})
		case !r.Acquired && h.End.Sub(r.Fault.Heal) > bound:
			vs = append(vs, Violation{ViolationProgress, r.Fault.Heal.Sub(h.Start),
				fmt.Sprintf("after %s (%s): no mutex acquisition in the %v to the end (bound %v)",
					r.Fault.Kind, r.Fault.Detail, h.End.Sub(r.Fault.Heal).Round(time.Millisecond), bound)})
		}
	}
	return vs
}
