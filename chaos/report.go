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

	LongestStall time.Duration // longest gap between mutex acquisitions
	Recoveries   []Recovery

	Violations []Violation
	EndChecks  []EndCheck
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
	for k, v := range m {
		found := false
		for _, kk := range keys {
			found = found || k == kk
		}
		if !found {
			parts = append(parts, fmt.Sprintf("%s=%d", k, v))
		}
	}
	return strings.Join(parts, " ")
}

var recipes = []string{RecipeMutex, RecipeSemaphore, RecipeRead, RecipeWrite}

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
		formatMap(r.WritesAccepted, []string{RecipeMutex, RecipeSemaphore, RecipeWrite}),
		formatMap(r.WritesRejected, []string{RecipeMutex, RecipeSemaphore, RecipeWrite}))
	total := 0
	for _, n := range r.Faults {
		total += n
	}
	fmt.Fprintf(&b, "  faults:            %d: %s\n", total, formatMap(r.Faults, FaultKinds))
	fmt.Fprintf(&b, "  lost replies:      armed %d, fired %d\n", r.LostRepliesArmed, r.LostRepliesFired)
	byKind := map[string]int{}
	for _, v := range r.Violations {
		byKind[v.Kind]++
	}
	fmt.Fprintf(&b, "  violations:        %d: %s\n", len(r.Violations), formatMap(byKind, []string{
		ViolationMutex, ViolationSemaphore, ViolationRWLock, ViolationFencing, ViolationProgress, ViolationEndState}))
	for _, v := range r.Violations {
		fmt.Fprintf(&b, "    %s\n", v)
	}
	fmt.Fprintf(&b, "  longest stall:     %v between mutex acquisitions\n", r.LongestStall.Round(time.Millisecond))
	var worst time.Duration
	for _, rc := range r.Recoveries {
		if rc.After > worst {
			worst = rc.After
		}
	}
	fmt.Fprintf(&b, "  recovery:          worst %v from heal to next mutex acquisition\n", worst.Round(time.Millisecond))
	rs := append([]Recovery(nil), r.Recoveries...)
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Fault.Start.Before(rs[j].Fault.Start) })
	for _, rc := range rs {
		after := "none before the end"
		if rc.Acquired {
			after = rc.After.Round(time.Millisecond).String()
		}
		fmt.Fprintf(&b, "    %-17s %-28s heal %-8v acquire %s\n", rc.Fault.Kind, rc.Fault.Detail,
			rc.Fault.Heal.Sub(rc.Fault.Start).Round(time.Millisecond), after)
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
