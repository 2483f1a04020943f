package chaos

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Report is the outcome of a run.
type Report struct {
	Seed           int64
	Duration       time.Duration // from the workers' start to their stop
	SessionTimeout time.Duration
	Bound          time.Duration // progress bound

	Acquisitions   map[string]int // by recipe
	FailedAcquires map[string]int
	WritesAccepted map[string]int
	WritesRejected map[string]int
	HoldsLost      map[string]int // holds ended by Done rather than Release

	Faults           map[string]int // by kind
	LostRepliesArmed int
	LostRepliesFired int

	LongestStall time.Duration // longest gap between a workload's mutex acquisitions
	Recoveries   []Recovery    // one per fault and workload

	// Overlaps sums up the mutex overlaps (two holders believing at once)
	// of each workload.
	Overlaps map[string]OverlapStats

	GrantCuts GrantCutStats
	Exec      ExecStats
	Counter   CounterStats // counter.go
	Barrier   BarrierStats // doublebarrier.go
	Ghost     GhostStats   // ghost.go
	Queue     QueueStats   // queuework.go

	Violations []Violation
	EndChecks  []EndCheck
}

// GrantCutStats sums up the timed cuts of the cut-grant fault.
type GrantCutStats struct {
	Cuts       int
	ByWorkload map[string]int
	// OnGrant counts the cuts within 1 ms and within 5 ms of a grant to
	// the cut client's cohort (before or after it).
	OnGrant1ms, OnGrant5ms int
	Refused                int // cuts during which an acquire of the client's cohort failed
	Judged                 int // cuts after which a standard-policy client's handles were asked
	Held                   int // of them, cuts after which a handle said it held with Done open
}

// ExecStats sums up the exec workload's rounds.
type ExecStats struct {
	Rounds    map[string]int // by loss, carried out
	NotRun    int            // rounds that could not be carried out (see the log)
	Beats     int
	AfterNext map[string]int // beats after the next holder's first write, by loss
	AfterExit int
	Survivors int
	Hung      int
	WorstExit map[string]time.Duration // from the loss to gocurator's exit, by loss
	ExitCodes map[string]int           // gocurator's exit status, as text
}

func (s *GrantCutStats) fill(gs []GrantCut) {
	s.ByWorkload = map[string]int{}
	for _, g := range gs {
		s.Cuts++
		s.ByWorkload[g.Workload]++
		if !g.Granted.IsZero() {
			d := g.Cut.Sub(g.Granted).Abs()
			if d <= time.Millisecond {
				s.OnGrant1ms++
			}
			if d <= 5*time.Millisecond {
				s.OnGrant5ms++
			}
		}
		if !g.Refused.IsZero() {
			s.Refused++
		}
		if g.Judged {
			s.Judged++
			if len(g.Held) > 0 {
				s.Held++
			}
		}
	}
}

func (s *ExecStats) fill(rs []ExecRound) {
	s.Rounds, s.AfterNext = map[string]int{}, map[string]int{}
	s.WorstExit, s.ExitCodes = map[string]time.Duration{}, map[string]int{}
	for _, r := range rs {
		if r.Err != "" {
			s.NotRun++
			continue
		}
		s.Rounds[r.Loss]++
		s.Beats += r.Beats
		s.AfterNext[r.Loss] += r.AfterNext
		s.AfterExit += r.AfterExit
		s.Survivors += len(r.Survivors)
		if r.Hung {
			s.Hung++
		}
		if r.Exited > s.WorstExit[r.Loss] {
			s.WorstExit[r.Loss] = r.Exited
		}
		s.ExitCodes[fmt.Sprint(r.ExitCode)]++
	}
}

// OverlapStats sums up mutex overlaps: how many, the longest and the total
// time two holders both believed they held.
type OverlapStats struct {
	Count   int
	Longest time.Duration
	Total   time.Duration
}

// OK reports whether the run found no violation.
func (r Report) OK() bool { return len(r.Violations) == 0 }

func (r *Report) fill(h History, rec *recorder) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	r.Duration = h.End.Sub(h.Start)
	r.Acquisitions = copyMap(rec.acquired)
	r.FailedAcquires = copyMap(rec.failed)
	r.WritesAccepted = copyMap(rec.accepted)
	r.WritesRejected = copyMap(rec.rejected)
	r.HoldsLost = map[string]int{}
	for _, iv := range h.Intervals {
		if iv.Lost {
			r.HoldsLost[iv.Recipe]++
		}
	}
	r.Faults = map[string]int{}
	for _, f := range h.Faults {
		r.Faults[f.Kind]++
	}
	r.GrantCuts.fill(h.GrantCuts)
	r.Exec.fill(h.ExecRounds)
	r.LongestStall = LongestStall(h)
	r.Recoveries = Recoveries(h)
	for i := range r.Recoveries {
		// Report fault times from the run's start.
		r.Recoveries[i].Fault.Detail += fmt.Sprintf(" @%v", r.Recoveries[i].Fault.Start.Sub(h.Start).Round(time.Millisecond))
	}
}

func copyMap(m map[string]int) map[string]int {
	c := make(map[string]int, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func formatMap(m map[string]int, keys []string) string {
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	var extra []string
	for k := range m {
		found := false
		for _, kk := range keys {
			found = found || k == kk
		}
		if !found {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}

var recipes = []string{RecipeMutex, RecipeLongMutex, RecipeSemaphore, RecipeRead, RecipeWrite, RecipeCohort, RecipeCohortWrite,
	RecipeElection}

// overlaps sums up the mutex overlaps among vs by workload.
func overlaps(vs []Violation) map[string]OverlapStats {
	m := map[string]OverlapStats{}
	for _, v := range vs {
		if v.Kind != ViolationMutex {
			continue
		}
		o := m[v.Workload]
		o.Count++
		o.Total += v.Overlap
		if v.Overlap > o.Longest {
			o.Longest = v.Overlap
		}
		m[v.Workload] = o
	}
	return m
}

func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "chaos report\n")
	fmt.Fprintf(&b, "  duration:          %v\n", r.Duration.Round(time.Second))
	fmt.Fprintf(&b, "  seed:              %d\n", r.Seed)
	fmt.Fprintf(&b, "  session timeout:   %v (progress bound %v)\n", r.SessionTimeout, r.Bound)
	fmt.Fprintf(&b, "  acquisitions:      %s\n", formatMap(r.Acquisitions, recipes))
	fmt.Fprintf(&b, "  failed acquires:   %s\n", formatMap(r.FailedAcquires, recipes))
	fmt.Fprintf(&b, "  holds lost (Done): %s\n", formatMap(r.HoldsLost, recipes))
	fmt.Fprintf(&b, "  fenced writes:     accepted %s; rejected %s\n",
		formatMap(r.WritesAccepted, []string{RecipeMutex, RecipeLongMutex, RecipeSemaphore, RecipeWrite, RecipeCohort, RecipeCohortWrite, RecipeElection}),
		formatMap(r.WritesRejected, []string{RecipeMutex, RecipeLongMutex, RecipeSemaphore, RecipeWrite, RecipeCohort, RecipeCohortWrite, RecipeElection}))
	total := 0
	for _, n := range r.Faults {
		total += n
	}
	fmt.Fprintf(&b, "  faults:            %d: %s\n", total, formatMap(r.Faults, FaultKinds))
	fmt.Fprintf(&b, "  lost replies:      armed %d, fired %d\n", r.LostRepliesArmed, r.LostRepliesFired)
	g := r.GrantCuts
	fmt.Fprintf(&b, "  timed cuts:        %d (%s): within 1ms of a grant %d, within 5ms %d; grant refused %d; judged %d, held after Suspended %d\n",
		g.Cuts, formatMap(g.ByWorkload, Workloads), g.OnGrant1ms, g.OnGrant5ms, g.Refused, g.Judged, g.Held)
	x := r.Exec
	exits := make([]string, 0, len(ExecLosses))
	for _, l := range ExecLosses {
		exits = append(exits, fmt.Sprintf("%s=%v", l, x.WorstExit[l].Round(time.Millisecond)))
	}
	fmt.Fprintf(&b, "  exec rounds:       %s; not carried out %d\n", formatMap(x.Rounds, ExecLosses), x.NotRun)
	fmt.Fprintf(&b, "    beats:           %d; after gocurator's exit %d; after the next holder's first write %s\n",
		x.Beats, x.AfterExit, formatMap(x.AfterNext, ExecLosses))
	fmt.Fprintf(&b, "    gocurator:       survivors %d, hung %d; loss to exit, worst %s; exit status %s\n",
		x.Survivors, x.Hung, strings.Join(exits, " "), formatMap(x.ExitCodes, nil))
	r.writeCounterBarrier(&b)
	r.writeGhosts(&b)
	r.writeQueues(&b)
	byKind := map[string]int{}
	byWorkload := map[string]int{}
	for _, v := range r.Violations {
		byKind[v.Kind]++
		if v.Workload != "" {
			byWorkload[v.Workload]++
		}
	}
	fmt.Fprintf(&b, "  violations:        %d: %s\n", len(r.Violations), formatMap(byKind, []string{
		ViolationMutex, ViolationLeader, ViolationSemaphore, ViolationRWLock, ViolationFencing, ViolationProgress, ViolationEndState,
		ViolationHeldSuspended, ViolationExec, ViolationCounter, ViolationBarrier, ViolationQueue, ViolationSimpleQueue, ViolationSimpleTwice}))
	fmt.Fprintf(&b, "    by workload:     %s\n", formatMap(byWorkload, Workloads))
	for _, w := range Workloads {
		if o, ok := r.Overlaps[w]; ok {
			fmt.Fprintf(&b, "    %s mutex overlaps: %d, longest %v, total %v\n", w, o.Count,
				o.Longest.Round(time.Millisecond), o.Total.Round(time.Millisecond))
		}
	}
	for _, v := range r.Violations {
		fmt.Fprintf(&b, "    %s\n", v)
	}
	fmt.Fprintf(&b, "  longest stall:     %v between a workload's mutex acquisitions\n", r.LongestStall.Round(time.Millisecond))
	var worst time.Duration
	for _, rc := range r.Recoveries {
		if rc.After > worst {
			worst = rc.After
		}
	}
	fmt.Fprintf(&b, "  recovery:          worst %v from heal to next mutex acquisition or term\n", worst.Round(time.Millisecond))
	// One line per fault, the recovery of each workload on it.
	type line struct {
		f     Fault
		after []string
	}
	var lines []*line
	byFault := map[Fault]*line{}
	for _, rc := range r.Recoveries {
		l := byFault[rc.Fault]
		if l == nil {
			l = &line{f: rc.Fault}
			byFault[rc.Fault] = l
			lines = append(lines, l)
		}
		after := "none before the end"
		if rc.Acquired {
			after = rc.After.Round(time.Millisecond).String()
		}
		if rc.Recipe != "" && rc.Recipe != RecipeMutex {
			after = rc.Recipe + " " + after
		}
		if rc.Workload != "" {
			after = rc.Workload + " " + after
		}
		l.after = append(l.after, after)
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].f.Start.Before(lines[j].f.Start) })
	for _, l := range lines {
		fmt.Fprintf(&b, "    %-17s %-60s heal %-8v acquire %s\n", l.f.Kind, l.f.Detail,
			l.f.Heal.Sub(l.f.Start).Round(time.Millisecond), strings.Join(l.after, ", "))
	}
	fmt.Fprintf(&b, "  end state:\n")
	for _, c := range r.EndChecks {
		ok := "ok"
		if !c.OK {
			ok = "FAILED"
		}
		fmt.Fprintf(&b, "    %-20s %-6s %s\n", c.Name, ok, c.Detail)
	}
	return b.String()
}
