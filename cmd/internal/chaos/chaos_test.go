package chaos

import (
	"context"
	"testing"
	"time"
)

// TestChaosShort is the regular suite's share of the chaos run: two minutes
// of faults, silent partitions included, on both workloads (standard and
// session error policy), and no violation: no two holders of a mutex and no
// two leaders of an election at once.
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
}
