package chaos

import (
	"context"
	"testing"
	"time"
)

// TestChaosShort is the regular suite's share of the chaos run: two minutes
// of faults, silent partitions and timed cuts included, on both workloads
// (standard and session error policy) and gocurator exec, and no
// violation: no two holders of a mutex and no two leaders of an election
// at once, no handle held after its client was Suspended, nothing of an
// exec's process tree alive or writing after the hold, the atomic
// counters' values on the server equal to the increments acknowledged
// (give or take those of unknown outcome), no double-barrier member
// through Enter without its round's ready node nor out of Leave while a
// member of its round is still in (members cut while in Leave included),
// and no node of recipes/node on the server after its Close returned nil
// (closed from the Recreating listener, or with the Start or the Close
// abandoned at its ctx's end); and the queues: every acknowledged put
// consumed exactly once by fenced consumers (in-process ones and consumer
// processes killed with SIGKILL), no simple-queue item taken twice, both
// queues drained at the end.
func TestChaosShort(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Config{
		Duration: 2 * time.Minute,
		Seed:     seed,
		Logf:     t.Logf,
	})
	t.Log("\n" + rep.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range rep.Violations {
		t.Errorf("violation: %v", v)
	}
	for _, r := range recipes {
		if rep.Acquisitions[r] == 0 {
			t.Errorf("%s made no progress: %v", r, rep.Acquisitions)
		}
	}
	if rep.WritesAccepted[RecipeMutex] == 0 || rep.WritesAccepted[RecipeLongMutex] == 0 || rep.WritesAccepted[RecipeWrite] == 0 ||
		rep.WritesAccepted[RecipeElection] == 0 {
		t.Errorf("no fenced writes accepted: %v", rep.WritesAccepted)
	}
	if rep.Faults[FaultSilentShort]+rep.Faults[FaultSilentLong] == 0 {
		t.Errorf("no silent partition in the schedule: %v", rep.Faults)
	}
	if g := rep.GrantCuts; g.Cuts == 0 || g.Judged == 0 || g.OnGrant5ms == 0 {
		t.Errorf("timed cuts: %+v, want some judged and some within 5ms of a grant", g)
	}
	for _, l := range ExecLosses {
		if rep.Exec.Rounds[l] == 0 {
			t.Errorf("no exec round with loss by %s: %+v", l, rep.Exec)
		}
	}
	for _, wl := range Workloads {
		if rep.Counter.Acked[wl] == 0 || rep.Barrier.Rounds[wl] == 0 {
			t.Errorf("%s: counter or double barrier made no progress: %+v, %+v", wl, rep.Counter, rep.Barrier)
		}
	}
	if rep.Ghost.Checked == 0 || rep.Ghost.Cycles[GhostCloseRecreating] == 0 {
		t.Errorf("abandoned writes: nothing judged: %+v", rep.Ghost)
	}
	if rep.Barrier.CutLeaves == 0 {
		t.Errorf("no member cut while in Leave: %+v", rep.Barrier)
	}
	for _, wl := range Workloads {
		q := rep.Queue
		if q.Consumed[wl] == q.ByProcess[wl] || q.ByProcess[wl] == 0 || q.Kills[wl] == 0 || q.Taken[wl] == 0 {
			t.Errorf("%s: queue workloads: no item consumed in process or by a process, or no process killed: %+v", wl, q)
		}
	}
	if rep.Exec.Beats == 0 {
		t.Errorf("no heartbeat of an exec tree: %+v", rep.Exec)
	}
}
