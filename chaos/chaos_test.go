package chaos

import (
	"context"
	"testing"
	"time"
)

// TestChaosShort is the regular suite's share of the chaos run: two minutes
// of faults, every kind at least once, no violation.
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
	if rep.Acquisitions[RecipeMutex] == 0 || rep.Acquisitions[RecipeSemaphore] == 0 ||
		rep.Acquisitions[RecipeRead] == 0 || rep.Acquisitions[RecipeWrite] == 0 {
		t.Errorf("a recipe made no progress: %v", rep.Acquisitions)
	}
	if rep.WritesAccepted[RecipeMutex] == 0 || rep.WritesAccepted[RecipeWrite] == 0 {
		t.Errorf("no fenced writes accepted: %v", rep.WritesAccepted)
	}
}
