package locking_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locking"
)

// The examples connect to the servers in $GOCURATOR_ZK, as the gocurator
// CLI does: a connect string such as "127.0.0.1:2181" (the tests' TestMain
// sets it to the package's test server).

// leaderDriver is a custom recipe: the oldest "leader-" node leads, every
// other candidate watches the one just ahead of it. Three methods are all a
// recipe needs; the loop does the rest (protected create, watches,
// cancellation clean-up, loss detection).
type leaderDriver struct{}

func (leaderDriver) Node() locking.NodeSpec {
	return locking.NodeSpec{Name: "leader-", Mode: framework.EphemeralSequential, Data: []byte("candidate")}
}

func (leaderDriver) Sequence(child string) (int32, bool) { return locking.Sequence(child, "leader-") }

func (leaderDriver) GetsTheLock(l locking.Listing) (locking.Verdict, error) {
	for i, name := range l.Sorted {
		if name != l.Own {
			continue
		}
		if i == 0 {
			return locking.Verdict{Held: true}, nil
		}
		// Only the first candidate can be in the way of the second, and
		// nobody joins ahead of us: its deletion makes us leader.
		return locking.Verdict{Watch: l.Sorted[i-1], HeldWhenGone: i == 1}, nil
	}
	return locking.Verdict{}, fmt.Errorf("%w: %s not a candidate", locking.ErrLockLost, l.Own)
}

// A custom recipe built on the shared loop: leader election.
func Example_customRecipe() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-custom"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	election := locking.New(c, "/services/billing/leader", leaderDriver{})
	hold, err := election.Acquire(ctx) // blocks until we lead
	if err != nil {
		log.Fatal(err)
	}
	_, name := framework.SplitPath(hold.Node())
	fmt.Println("leading as", strings.TrimRight(framework.StripProtected(name), "0123456789"), "...")
	// ... lead until hold.Done() closes (leadership lost with the
	// connection: hold.Err() says why) or until done leading:
	if err := hold.Release(ctx); err != nil {
		log.Fatal(err)
	}
	<-hold.Done()
	fmt.Println("resigned:", errors.Is(hold.Err(), locking.ErrNotHeld))
	// Output:
	// leading as leader- ...
	// resigned: true
}

// The predicate for the standard recipes, evaluated on a listing.
func ExampleStandardDriver() {
	d := locking.StandardDriver{LockName: "lock-"}
	sorted := locking.SortChildren([]string{
		"_c_b-lock-0000000003", "config", "_c_a-lock-0000000002", "_c_c-lock-0000000004",
	}, d.Sequence)
	v, _ := d.GetsTheLock(locking.Listing{Sorted: sorted, Own: "_c_c-lock-0000000004", Limit: 1})
	fmt.Println(sorted)
	fmt.Printf("held=%v watch=%s\n", v.Held, v.Watch)
	// Output:
	// [_c_a-lock-0000000002 _c_b-lock-0000000003 _c_c-lock-0000000004]
	// held=false watch=_c_b-lock-0000000003
}
