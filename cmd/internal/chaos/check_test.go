package chaos

import (
	"testing"
	"time"
)

var t0 = time.Unix(1_000_000, 0)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func iv(recipe, holder string, from, to int) Interval {
	return Interval{Recipe: recipe, Holder: holder, Start: at(from), End: at(to)}
}

// A clean history: holds that touch but do not overlap, two semaphore
// holders, readers together, writes in token order, quick recovery.
func clean() History {
	return History{
		Start: at(0),
		End:   at(10_000),
		Intervals: []Interval{
			iv(RecipeMutex, "a", 0, 100),
			iv(RecipeMutex, "b", 100, 200), // touches a: not an overlap
			iv(RecipeMutex, "a", 5_000, 5_100),
			iv(RecipeSemaphore, "a", 0, 300),
			iv(RecipeSemaphore, "b", 100, 400),
			iv(RecipeSemaphore, "c", 300, 500),
			iv(RecipeRead, "a", 0, 300),
			iv(RecipeRead, "b", 100, 400),
			iv(RecipeWrite, "c", 400, 500),
			iv(RecipeRead, "a", 500, 600),
		},
		Writes: []Write{
			{Recipe: RecipeMutex, Holder: "a", Version: 1, Token: 10},
			{Recipe: RecipeMutex, Holder: "b", Version: 2, Token: 12},
			{Recipe: RecipeMutex, Holder: "a", Version: 3, Token: 40},
			{Recipe: RecipeSemaphore, Holder: "b", Version: 4, Token: 3}, // not fenced in order
			{Recipe: RecipeWrite, Holder: "c", Version: 1, Token: 20},
		},
		Faults: []Fault{{Kind: FaultCutLong, Start: at(1_000), Heal: at(3_000)}},
		GrantCuts: []GrantCut{
			{Workload: WorkloadStandard, Client: 1, Released: at(6_000), Cut: at(6_001), Granted: at(6_001), Judged: true},
		},
		ExecRounds: []ExecRound{
			{Round: 0, Loss: ExecCut, Start: at(7_000), Token: 50, Beats: 20, NextToken: 60, Exited: 500 * time.Millisecond},
			// After a break the next holder is in at once, while the
			// tree has its --grace: beats after its write are allowed,
			// not after gocurator's exit.
			{Round: 1, Loss: ExecBreak, Start: at(8_000), Token: 70, Beats: 30, AfterNext: 15, NextToken: 80},
			// A round that never ran its tree is not judged.
			{Round: 2, Loss: ExecSilent, Err: "gocurator exited before the tree beat", Hung: true},
		},
	}
}

// execRound0 modifies the clean history's first exec round (a cut).
func execRound0(f func(r *ExecRound)) func(h *History) {
	return func(h *History) { f(&h.ExecRounds[0]) }
}

func TestCheck(t *testing.T) {
	bound := 4 * time.Second
	tests := []struct {
		name   string
		modify func(h *History)
		want   string // violation kind; "" for none
	}{
		{"clean history", func(*History) {}, ""},
		{"two mutex holders believe they hold", func(h *History) {
			h.Intervals = append(h.Intervals, iv(RecipeMutex, "c", 150, 250))
		}, ViolationMutex},
		{"three semaphore holders", func(h *History) {
			h.Intervals = append(h.Intervals, iv(RecipeSemaphore, "d", 350, 360))
		}, ViolationSemaphore},
		{"writer beside a reader", func(h *History) {
			h.Intervals = append(h.Intervals, iv(RecipeWrite, "d", 250, 260))
		}, ViolationRWLock},
		{"two writers", func(h *History) {
			h.Intervals = append(h.Intervals, iv(RecipeWrite, "d", 450, 460))
		}, ViolationRWLock},
		{"mutex token goes backwards", func(h *History) {
			h.Writes = append(h.Writes, Write{Recipe: RecipeMutex, Holder: "c", Version: 4, Token: 39})
		}, ViolationFencing},
		{"write-lock token repeats", func(h *History) {
			h.Writes = append(h.Writes, Write{Recipe: RecipeWrite, Holder: "c", Version: 2, Token: 20})
		}, ViolationFencing},
		{"stall after heal longer than the bound", func(h *History) {
			h.Faults = append(h.Faults, Fault{Kind: FaultKillLeader, Start: at(200), Heal: at(300)})
		}, ViolationProgress},
		{"no acquisition after heal to a late end", func(h *History) {
			h.Faults = append(h.Faults, Fault{Kind: FaultLostReply, Start: at(5_500), Heal: at(5_600)})
		}, ViolationProgress},
		{"a handle holds with Done open after its client was Suspended", func(h *History) {
			h.GrantCuts[0].Held = []string{"c1-cohort-b"}
		}, ViolationHeldSuspended},
		{"a beat accepted after gocurator exited", execRound0(func(r *ExecRound) { r.AfterExit = 1 }), ViolationExec},
		{"a beat after the next holder's first write, loss by the connection", execRound0(func(r *ExecRound) { r.AfterNext = 1 }), ViolationExec},
		{"a process of the tree alive after gocurator exited", execRound0(func(r *ExecRound) { r.Survivors = []string{"42 (sh)"} }), ViolationExec},
		{"gocurator never exits", execRound0(func(r *ExecRound) { r.Hung = true }), ViolationExec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := clean()
			tt.modify(&h)
			vs := Check(h, bound)
			if tt.want == "" {
				if len(vs) != 0 {
					t.Fatalf("violations in a clean history: %v", vs)
				}
				return
			}
			if len(vs) == 0 {
				t.Fatalf("no violation, want %s", tt.want)
			}
			for _, v := range vs {
				if v.Kind != tt.want {
					t.Errorf("violation %v, want only %s", v, tt.want)
				}
			}
		})
	}
}

// A fault healed just before the end, with no acquisition yet, cannot be
// judged: it is not a violation.
func TestCheckProgressUnjudged(t *testing.T) {
	h := clean()
	h.Faults = append(h.Faults, Fault{Kind: FaultCutShort, Start: at(9_000), Heal: at(9_500)})
	if vs := Check(h, 4*time.Second); len(vs) != 0 {
		t.Fatalf("violations: %v", vs)
	}
}

func TestLongestStallAndRecoveries(t *testing.T) {
	h := clean()
	if got, want := LongestStall(h), 5*time.Second; got != want {
		t.Errorf("LongestStall = %v, want %v", got, want)
	}
	rs := Recoveries(h)
	if len(rs) != 1 || !rs[0].Acquired || rs[0].After != 2*time.Second {
		t.Errorf("Recoveries = %+v, want one of 2s", rs)
	}
}

// Two holds of one mutex by holders on different clients that overlap are
// reported as a pair, with how long both believed they held.
func TestCheckReportsOverlappingPairs(t *testing.T) {
	h := History{Start: at(0), End: at(10_000), Intervals: []Interval{
		{Workload: WorkloadSession, Recipe: RecipeLongMutex, Lock: "/l", Client: 1, Holder: "c1-long",
			Start: at(0), End: at(5_000), Token: 10, Lost: true},
		{Workload: WorkloadSession, Recipe: RecipeLongMutex, Lock: "/l", Client: 2, Holder: "c2-long",
			Start: at(3_200), End: at(3_700), Token: 12},
		{Workload: WorkloadSession, Recipe: RecipeLongMutex, Lock: "/l", Client: 3, Holder: "c3-long",
			Start: at(3_700), End: at(8_000), Token: 14},
		// Another lock, another workload: not judged with /l.
		{Workload: WorkloadStandard, Recipe: RecipeLongMutex, Lock: "/m", Client: 4, Holder: "c4-long",
			Start: at(1_000), End: at(2_000), Token: 3},
	}}
	vs := Check(h, time.Hour)
	if len(vs) != 2 {
		t.Fatalf("violations %v, want c1 with c2 and c1 with c3", vs)
	}
	want := []time.Duration{500 * time.Millisecond, 1300 * time.Millisecond}
	for i, v := range vs {
		if v.Kind != ViolationMutex || v.Workload != WorkloadSession || v.Overlap != want[i] {
			t.Errorf("violation %d = %+v, want a %s overlap of %v in %s", i, v, ViolationMutex, want[i], WorkloadSession)
		}
	}
	o := overlaps(vs)[WorkloadSession]
	if o.Count != 2 || o.Longest != 1300*time.Millisecond || o.Total != 1800*time.Millisecond {
		t.Errorf("overlap stats %+v", o)
	}
	t.Log(vs)
}

func TestCheckGroups(t *testing.T) {
	tests := []struct {
		name string
		h    History
		want string // violation kind; "" for none
	}{
		{"one holder's successive holds may touch", History{Intervals: []Interval{
			{Recipe: RecipeMutex, Lock: "/a", Holder: "x", Start: at(0), End: at(100)},
			{Recipe: RecipeMutex, Lock: "/a", Holder: "x", Start: at(100), End: at(200)},
		}}, ""},
		{"two handles on one client are two owners", History{Intervals: []Interval{
			{Recipe: RecipeMutex, Lock: "/a", Client: 1, Holder: "c1-mutex-a", Start: at(0), End: at(100)},
			{Recipe: RecipeMutex, Lock: "/a", Client: 1, Holder: "c1-mutex-b", Start: at(50), End: at(200)},
		}}, ViolationMutex},
		{"different locks may be held at once", History{Intervals: []Interval{
			{Recipe: RecipeMutex, Lock: "/a", Holder: "x", Start: at(0), End: at(100)},
			{Recipe: RecipeMutex, Lock: "/b", Holder: "y", Start: at(0), End: at(100)},
		}}, ""},
		{"same path in two workloads are two locks", History{Intervals: []Interval{
			{Workload: WorkloadStandard, Recipe: RecipeWrite, Lock: "/rw", Holder: "x", Start: at(0), End: at(100)},
			{Workload: WorkloadSession, Recipe: RecipeWrite, Lock: "/rw", Holder: "y", Start: at(0), End: at(100)},
		}}, ""},
		{"fencing is per resource", History{Writes: []Write{
			{Recipe: RecipeLongMutex, Resource: "/r1", Version: 1, Token: 20},
			{Recipe: RecipeLongMutex, Resource: "/r2", Version: 2, Token: 10},
		}}, ""},
		{"long-mutex tokens go backwards", History{Writes: []Write{
			{Recipe: RecipeLongMutex, Resource: "/r1", Version: 1, Token: 20},
			{Recipe: RecipeLongMutex, Resource: "/r1", Version: 2, Token: 10},
		}}, ViolationFencing},
		{"a cohort's local holders share a token", History{Writes: []Write{
			{Recipe: RecipeCohort, Resource: "/r", Client: 1, Version: 1, Token: 20},
			{Recipe: RecipeCohort, Resource: "/r", Client: 1, Version: 2, Token: 20},
			{Recipe: RecipeCohort, Resource: "/r", Client: 2, Version: 3, Token: 30},
		}}, ""},
		{"a cohort token shared across clients", History{Writes: []Write{
			{Recipe: RecipeCohort, Resource: "/r", Client: 1, Version: 1, Token: 20},
			{Recipe: RecipeCohort, Resource: "/r", Client: 2, Version: 2, Token: 20},
		}}, ViolationFencing},
		{"a cohort token goes backwards", History{Writes: []Write{
			{Recipe: RecipeCohort, Resource: "/r", Client: 1, Version: 1, Token: 20},
			{Recipe: RecipeCohort, Resource: "/r", Client: 1, Version: 2, Token: 10},
		}}, ViolationFencing},
		{"terms of one election that touch", History{Intervals: []Interval{
			{Recipe: RecipeElection, Lock: "/e", Client: 1, Holder: "c1-elect-a", Start: at(0), End: at(100)},
			{Recipe: RecipeElection, Lock: "/e", Client: 2, Holder: "c2-elect-a", Start: at(100), End: at(200)},
		}}, ""},
		{"two participants of one client lead at once", History{Intervals: []Interval{
			{Recipe: RecipeElection, Lock: "/e", Client: 1, Holder: "c1-elect-a", Start: at(0), End: at(100)},
			{Recipe: RecipeElection, Lock: "/e", Client: 1, Holder: "c1-elect-b", Start: at(99), End: at(200)},
		}}, ViolationLeader},
		{"a deposed leader believes past the next term's start", History{Intervals: []Interval{
			{Recipe: RecipeElection, Lock: "/e", Client: 1, Holder: "c1-elect-a", Start: at(0), End: at(5_000), Lost: true},
			{Recipe: RecipeElection, Lock: "/e", Client: 2, Holder: "c2-elect-b", Start: at(4_000), End: at(4_100)},
		}}, ViolationLeader},
		{"two elections may each have a leader", History{Intervals: []Interval{
			{Workload: WorkloadStandard, Recipe: RecipeElection, Lock: "/e", Holder: "x", Start: at(0), End: at(100)},
			{Workload: WorkloadSession, Recipe: RecipeElection, Lock: "/e", Holder: "y", Start: at(0), End: at(100)},
		}}, ""},
		{"election tokens go backwards", History{Writes: []Write{
			{Recipe: RecipeElection, Resource: "/r", Client: 1, Version: 1, Token: 20},
			{Recipe: RecipeElection, Resource: "/r", Client: 1, Version: 2, Token: 10},
		}}, ViolationFencing},
		{"an election token repeats on one client", History{Writes: []Write{
			{Recipe: RecipeElection, Resource: "/r", Client: 1, Version: 1, Token: 20},
			{Recipe: RecipeElection, Resource: "/r", Client: 1, Version: 2, Token: 20},
		}}, ViolationFencing},
		{"an election without a term after a heal, its mutex with", History{
			Start: at(0), End: at(20_000), Workloads: []string{WorkloadStandard},
			Intervals: []Interval{
				{Workload: WorkloadStandard, Recipe: RecipeMutex, Holder: "x", Start: at(2_100), End: at(2_200)},
				{Workload: WorkloadStandard, Recipe: RecipeElection, Holder: "y", Start: at(500), End: at(600)},
			},
			Faults: []Fault{{Kind: FaultCutLong, Start: at(1_000), Heal: at(2_000)}},
		}, ViolationProgress},
		{"an election with a term soon after a heal", History{
			Start: at(0), End: at(20_000), Workloads: []string{WorkloadStandard},
			Intervals: []Interval{
				{Workload: WorkloadStandard, Recipe: RecipeMutex, Holder: "x", Start: at(2_100), End: at(2_200)},
				{Workload: WorkloadStandard, Recipe: RecipeElection, Holder: "y", Start: at(500), End: at(600)},
				{Workload: WorkloadStandard, Recipe: RecipeElection, Holder: "z", Start: at(5_000), End: at(9_000)},
			},
			Faults: []Fault{{Kind: FaultCutLong, Start: at(1_000), Heal: at(2_000)}},
		}, ""},
		{"a workload without progress is caught beside one with", History{
			Start: at(0), End: at(20_000), Workloads: []string{WorkloadStandard, WorkloadSession},
			Intervals: []Interval{
				{Workload: WorkloadStandard, Recipe: RecipeMutex, Holder: "x", Start: at(3_000), End: at(3_100)},
				{Workload: WorkloadSession, Recipe: RecipeMutex, Holder: "y", Start: at(500), End: at(600)},
			},
			Faults: []Fault{{Kind: FaultSilentLong, Start: at(1_000), Heal: at(2_000)}},
		}, ViolationProgress},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vs := Check(tt.h, 4*time.Second)
			if tt.want == "" {
				if len(vs) != 0 {
					t.Fatalf("violations: %v", vs)
				}
				return
			}
			if len(vs) == 0 {
				t.Fatalf("no violation, want %s", tt.want)
			}
			for _, v := range vs {
				if v.Kind != tt.want {
					t.Errorf("violation %v, want only %s", v, tt.want)
				}
			}
		})
	}
}
