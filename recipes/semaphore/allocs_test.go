package semaphore_test

import (
	"testing"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/semaphore"
)

// Every acquire runs a loop of its own; their metric instruments are made
// once per Semaphore, not per acquire (that cost about 60 allocations an
// acquire: 142 a cycle before, 77 after, go-zookeeper's own included).
func TestLeaseCycleAllocations(t *testing.T) {
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	ctx := testkit.Ctx(t)
	s := semaphore.New(c, semPath, 8)
	cycle := func() {
		l, err := s.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	cycle() // the path's containers and the first instruments
	if got := testing.AllocsPerRun(50, cycle); got > 110 {
		t.Fatalf("a free lease's acquire and release allocate %.0f times, want at most 110 (instruments made per acquire again?)", got)
	}
}
