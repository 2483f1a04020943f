package chaos

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Violation kinds.
const (
	ViolationMutex     = "mutex-overlap"
	ViolationLeader    = "double-leader" // two participants of one election believed they led at once
	ViolationSemaphore = "semaphore-overlap"
	ViolationRWLock    = "rwlock-overlap"
	ViolationFencing   = "fencing-order"
	ViolationProgress  = "progress"
	ViolationEndState  = "end-state"
	// ViolationHeldSuspended: a handle of a standard-policy client said it
	// held, with Done open, after its client had been Suspended for
	// grantCutHold (a timed cut).
	ViolationHeldSuspended = "held-after-suspend"
	// ViolationExec: something of gocurator exec's process tree outlived
	// the hold: a heartbeat accepted after gocurator exited or (for a loss
	// by the connection) after the next holder's first write, a process
	// alive once gocurator had exited, or a gocurator that did not exit.
	ViolationExec = "exec-outlived"
)

// Violation is one broken guarantee.
type Violation struct {
	Kind     string
	Workload string        // "" when not tied to one
	At       time.Duration // since the run's start
	Overlap  time.Duration // for a mutex overlap: how long two holders both believed they held
	Detail   string
}

func (v Violation) String() string {
	w := ""
	if v.Workload != "" {
		w = " [" + v.Workload + "]"
	}
	return fmt.Sprintf("%s%s at %v: %s", v.Kind, w, v.At.Round(time.Millisecond), v.Detail)
}

// Check judges h: mutual exclusion on the recorded intervals (each lock on
// its own; an election's terms as a mutex's holds), fencing order of the
// accepted writes (each resource on its own), and progress (in every
// workload, a mutex acquisition, and a term of the election if h has any,
// starts within bound of every fault's heal). It does no I/O.
//
// Mutual exclusion is judged on what the holders believed, not on what the
// servers accepted: any two holds of a mutex by different holders whose
// intervals overlap in wall-clock time are a violation, whether or not
// fencing kept the stale holder's writes out.
func Check(h History, bound time.Duration) []Violation {
	var vs []Violation
	for _, g := range lockGroups(h) {
		switch g.class {
		case RecipeMutex, RecipeLongMutex, RecipeCohort:
			vs = append(vs, checkExclusive(h, g.ivs, ViolationMutex)...)
		case RecipeElection:
			vs = append(vs, checkExclusive(h, g.ivs, ViolationLeader)...)
		case RecipeSemaphore:
			vs = append(vs, checkLimit(h, g.ivs, 2, ViolationSemaphore)...)
		case classRW:
			vs = append(vs, checkRW(h, g.ivs)...)
		}
	}
	for _, g := range writeGroups(h) {
		vs = append(vs, checkFencing(g)...)
	}
	vs = append(vs, checkProgress(h, bound)...)
	vs = append(vs, checkGrantCuts(h)...)
	vs = append(vs, checkExec(h)...)
	return vs
}

// checkGrantCuts reports every judged timed cut after which a handle said
// it held with Done open.
func checkGrantCuts(h History) []Violation {
	var vs []Violation
	for _, g := range h.GrantCuts {
		if g.Judged && len(g.Held) > 0 {
			vs = append(vs, Violation{Kind: ViolationHeldSuspended, Workload: g.Workload, At: g.Cut.Sub(h.Start),
				Detail: fmt.Sprintf("client %d cut %v after the release ahead of it: after %v Suspended, %v held with Done open",
					g.Client, g.Cut.Sub(g.Released).Round(time.Microsecond), grantCutHold, g.Held)})
		}
	}
	return vs
}

// checkExec reports every exec round in which something of the tree
// outlived the hold. After a loss by the connection (cut, silent) the next
// holder gets the lock only once the server has expired gocurator's
// session, by which time the tree must be gone; after a break the next
// holder gets it at once, while the tree has --grace to end, so only the
// beats after gocurator's exit count.
func checkExec(h History) []Violation {
	var vs []Violation
	for _, r := range h.ExecRounds {
		if r.Err != "" && r.Token == 0 {
			continue // never ran a tree
		}
		var what []string
		if r.Hung {
			what = append(what, "gocurator did not exit")
		}
		if r.AfterExit > 0 {
			what = append(what, fmt.Sprintf("%d beats accepted after gocurator exited", r.AfterExit))
		}
		if r.Loss != ExecBreak && r.AfterNext > 0 {
			what = append(what, fmt.Sprintf("%d beats accepted after the next holder's first write", r.AfterNext))
		}
		if len(r.Survivors) > 0 {
			what = append(what, fmt.Sprintf("alive after gocurator exited: %v", r.Survivors))
		}
		if len(what) > 0 {
			vs = append(vs, Violation{Kind: ViolationExec, At: r.Start.Sub(h.Start),
				Detail: fmt.Sprintf("round %d (%s, token %d, next holder's token %d): %s",
					r.Round, r.Loss, r.Token, r.NextToken, strings.Join(what, "; "))})
		}
	}
	return vs
}

// classRW groups the read and write holds of one read/write lock.
const classRW = "rwlock"

type lockGroup struct {
	class string
	ivs   []*Interval
}

// lockGroups splits h's intervals by lock: workload, path and kind of lock.
func lockGroups(h History) []lockGroup {
	type key struct{ workload, lock, class string }
	idx := map[key]int{}
	var keys []key
	var groups []lockGroup
	for i := range h.Intervals {
		iv := &h.Intervals[i]
		class := iv.Recipe
		if class == RecipeRead || class == RecipeWrite || class == RecipeCohortWrite {
			class = classRW
		}
		k := key{iv.Workload, iv.Lock, class}
		j, ok := idx[k]
		if !ok {
			j = len(groups)
			idx[k] = j
			keys = append(keys, k)
			groups = append(groups, lockGroup{class: class})
		}
		groups[j].ivs = append(groups[j].ivs, iv)
	}
	order := make([]int, len(groups))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool {
		ka, kb := keys[order[a]], keys[order[b]]
		if ka.workload != kb.workload {
			return ka.workload < kb.workload
		}
		if ka.lock != kb.lock {
			return ka.lock < kb.lock
		}
		return ka.class < kb.class
	})
	sorted := make([]lockGroup, len(groups))
	for i, j := range order {
		sorted[i] = groups[j]
	}
	return sorted
}

// end is iv's end, never before its start.
func end(iv *Interval) time.Time {
	if iv.End.Before(iv.Start) {
		return iv.Start
	}
	return iv.End
}

// checkExclusive reports every two holds by different holders that overlap
// as violations of kind: a hold that ends at the instant the next starts
// does not.
func checkExclusive(h History, ivs []*Interval, kind string) []Violation {
	sorted := append([]*Interval(nil), ivs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Start.Before(sorted[j].Start) })
	var vs []Violation
	var open []*Interval
	for _, b := range sorted {
		kept := open[:0]
		for _, a := range open {
			if end(a).After(b.Start) {
				kept = append(kept, a)
			}
		}
		open = kept
		for _, a := range open {
			if a.Holder == b.Holder {
				continue
			}
			until := end(a)
			if end(b).Before(until) {
				until = end(b)
			}
			overlap := until.Sub(b.Start)
			if overlap <= 0 {
				continue
			}
			vs = append(vs, Violation{
				Kind:     kind,
				Workload: b.Workload,
				At:       b.Start.Sub(h.Start),
				Overlap:  overlap,
				Detail: fmt.Sprintf("%s %s: %s held %v-%v, %s from %v: both believed they held for %v",
					b.Recipe, b.Lock, describe(a), a.Start.Sub(h.Start).Round(time.Millisecond),
					end(a).Sub(h.Start).Round(time.Millisecond), describe(b),
					b.Start.Sub(h.Start).Round(time.Millisecond), overlap.Round(time.Millisecond)),
			})
		}
		open = append(open, b)
	}
	return vs
}

// describe names a hold's holder, client and token, and whether Done ended it.
func describe(iv *Interval) string {
	s := fmt.Sprintf("%s (client %d, token %d", iv.Holder, iv.Client, iv.Token)
	if iv.Lost {
		s += ", ended by Done"
	} else {
		s += ", released"
	}
	return s + ")"
}

type event struct {
	at    time.Time
	start bool
	iv    *Interval
}

// events returns the starts and ends of ivs in time order; at equal times
// ends come first, so touching holds do not overlap.
func events(ivs []*Interval) []event {
	var evs []event
	for _, iv := range ivs {
		evs = append(evs, event{iv.Start, true, iv}, event{end(iv), false, iv})
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

func checkLimit(h History, ivs []*Interval, limit int, kind string) []Violation {
	var vs []Violation
	open := map[*Interval]bool{}
	for _, e := range events(ivs) {
		if !e.start {
			delete(open, e.iv)
			continue
		}
		open[e.iv] = true
		if len(open) > limit {
			vs = append(vs, Violation{Kind: kind, Workload: e.iv.Workload, At: e.at.Sub(h.Start),
				Detail: fmt.Sprintf("%s %s: %d holders at once (max %d): %v",
					e.iv.Recipe, e.iv.Lock, len(open), limit, holders(open))})
		}
	}
	return vs
}

func checkRW(h History, ivs []*Interval) []Violation {
	var vs []Violation
	open := map[*Interval]bool{}
	readers, writers := 0, 0
	for _, e := range events(ivs) {
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
			vs = append(vs, Violation{Kind: ViolationRWLock, Workload: e.iv.Workload, At: e.at.Sub(h.Start),
				Detail: fmt.Sprintf("%s: %d writers and %d readers at once: %v",
					e.iv.Lock, writers, readers, holders(open))})
		}
	}
	return vs
}

// fencedRecipes are the recipes whose writes must carry increasing tokens.
// The semaphore's writes are fenced by the lease's node but not ordered:
// two leases hold at once.
var fencedRecipes = map[string]bool{RecipeMutex: true, RecipeLongMutex: true, RecipeWrite: true, RecipeCohort: true,
	RecipeCohortWrite: true, RecipeElection: true}

// writeGroups splits the fenced writes by workload, recipe and resource.
func writeGroups(h History) [][]Write {
	type key struct{ workload, recipe, resource string }
	idx := map[key]int{}
	var groups [][]Write
	for _, w := range h.Writes {
		if !fencedRecipes[w.Recipe] {
			continue
		}
		k := key{w.Workload, w.Recipe, w.Resource}
		j, ok := idx[k]
		if !ok {
			j = len(groups)
			idx[k] = j
			groups = append(groups, nil)
		}
		groups[j] = append(groups[j], w)
	}
	sort.SliceStable(groups, func(a, b int) bool {
		ka, kb := groups[a][0], groups[b][0]
		if ka.Workload != kb.Workload {
			return ka.Workload < kb.Workload
		}
		if ka.Recipe != kb.Recipe {
			return ka.Recipe < kb.Recipe
		}
		return ka.Resource < kb.Resource
	})
	return groups
}

func checkFencing(ws []Write) []Violation {
	ws = append([]Write(nil), ws...)
	sort.Slice(ws, func(i, j int) bool { return ws[i].Version < ws[j].Version })
	var vs []Violation
	for i := 1; i < len(ws); i++ {
		// A cohort's local holders share their node's token (one process
		// serialises them): an equal token is in order only from the same
		// client, of the cohort recipe.
		cohort := ws[i].Recipe == RecipeCohort || ws[i].Recipe == RecipeCohortWrite
		shared := cohort && ws[i].Token == ws[i-1].Token && ws[i].Client == ws[i-1].Client
		if ws[i].Token <= ws[i-1].Token && !shared {
			vs = append(vs, Violation{Kind: ViolationFencing, Workload: ws[i].Workload,
				Detail: fmt.Sprintf("%s %s: version %d token %d (%s) after version %d token %d (%s)",
					ws[i].Recipe, ws[i].Resource, ws[i].Version, ws[i].Token, ws[i].Holder,
					ws[i-1].Version, ws[i-1].Token, ws[i-1].Holder)})
		}
	}
	return vs
}

// Recovery is how long a workload's mutex took to be acquired again (or its
// election to have a new term) after a fault healed; Acquired is false when
// it was not before the run ended.
type Recovery struct {
	Fault    Fault
	Workload string
	Recipe   string // RecipeMutex or RecipeElection
	Acquired bool
	After    time.Duration
}

// progressRecipes are the recipes whose progress after a heal is judged.
var progressRecipes = map[string]bool{RecipeMutex: true, RecipeElection: true}

// judged returns the recipes whose progress is judged in h: the mutex, and
// the election if h has any term.
func judged(h History) []string {
	rs := []string{RecipeMutex}
	for _, iv := range h.Intervals {
		if iv.Recipe == RecipeElection {
			return append(rs, RecipeElection)
		}
	}
	return rs
}

// workloads returns h's workloads: those it names, else those its
// intervals carry.
func workloads(h History) []string {
	seen := map[string]bool{}
	var ws []string
	add := func(w string) {
		if !seen[w] {
			seen[w] = true
			ws = append(ws, w)
		}
	}
	for _, w := range h.Workloads {
		add(w)
	}
	if len(ws) == 0 {
		for _, iv := range h.Intervals {
			add(iv.Workload)
		}
		sort.Strings(ws)
	}
	return ws
}

// Recoveries returns, for every fault of h and every workload, the time from
// the fault's heal to the start of the workload's next mutex acquisition,
// and to the start of its election's next term if h has terms.
func Recoveries(h History) []Recovery {
	var rs []Recovery
	recipes := judged(h)
	for _, f := range h.Faults {
		for _, w := range workloads(h) {
			for _, recipe := range recipes {
				starts := startsOf(h, w, recipe)
				i := sort.Search(len(starts), func(i int) bool { return !starts[i].Before(f.Heal) })
				r := Recovery{Fault: f, Workload: w, Recipe: recipe}
				if i < len(starts) {
					r.Acquired, r.After = true, starts[i].Sub(f.Heal)
				}
				rs = append(rs, r)
			}
		}
	}
	return rs
}

func mutexStarts(h History, workload string) []time.Time { return startsOf(h, workload, RecipeMutex) }

// startsOf returns the starts of a workload's holds of recipe, in order.
func startsOf(h History, workload, recipe string) []time.Time {
	var starts []time.Time
	for _, iv := range h.Intervals {
		if iv.Recipe == recipe && iv.Workload == workload {
			starts = append(starts, iv.Start)
		}
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i].Before(starts[j]) })
	return starts
}

// LongestStall returns the longest time between acquisitions of a
// workload's mutex (counting the run's start and end), the longest of all
// workloads.
func LongestStall(h History) time.Duration {
	var longest time.Duration
	for _, w := range workloads(h) {
		prev := h.Start
		for _, s := range append(mutexStarts(h, w), h.End) {
			if d := s.Sub(prev); d > longest {
				longest = d
			}
			if s.After(prev) {
				prev = s
			}
		}
	}
	return longest
}

func checkProgress(h History, bound time.Duration) []Violation {
	var vs []Violation
	for _, r := range Recoveries(h) {
		switch {
		case r.Acquired && r.After > bound:
			vs = append(vs, Violation{Kind: ViolationProgress, Workload: r.Workload, At: r.Fault.Heal.Sub(h.Start),
				Detail: fmt.Sprintf("after %s (%s): first %s acquisition %v after heal (bound %v)",
					r.Fault.Kind, r.Fault.Detail, r.Recipe, r.After.Round(time.Millisecond), bound)})
		case !r.Acquired && h.End.Sub(r.Fault.Heal) > bound:
			vs = append(vs, Violation{Kind: ViolationProgress, Workload: r.Workload, At: r.Fault.Heal.Sub(h.Start),
				Detail: fmt.Sprintf("after %s (%s): no %s acquisition in the %v to the end (bound %v)",
					r.Fault.Kind, r.Fault.Detail, r.Recipe, h.End.Sub(r.Fault.Heal).Round(time.Millisecond), bound)})
		}
	}
	return vs
}
