package atomic_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/atomic"
)

// The examples connect to the servers in $GOCURATOR_ZK, as the gocurator
// CLI does: a connect string such as "127.0.0.1:2181" (the tests' TestMain
// sets it to the package's test server).

func ExampleNewLong() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("app"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	orders := atomic.NewLong(c, "/counters/orders")
	defer orders.Close(ctx) // deletes the handle's writer child; the value stays
	if err := orders.ForceSet(ctx, 0); err != nil {
		log.Fatal(err)
	}
	n, err := orders.Add(ctx, 3)
	fmt.Println("after add:", n, err)
	n, err = orders.Get(ctx)
	fmt.Println("read:", n, err)
	// Output:
	// after add: 3 <nil>
	// read: 3 <nil>
}

// Curator's AtomicValue shape: whether the update happened, the values
// before and after, and the tries.
func ExampleNumber_Increment() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("app"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	hits := atomic.NewInt(c, "/counters/hits", atomic.PromotedToLock("/locks/hits"))
	defer hits.Close(ctx) // deletes the handle's writer child; the value stays
	if err := hits.ForceSet(ctx, 41); err != nil {
		log.Fatal(err)
	}
	r, err := hits.Increment(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Succeeded, r.PreValue, r.PostValue, r.Stats.OptimisticTries, r.Stats.PromotedTries)
	// Output:
	// true 41 42 1 0
}

func ExampleNewValue() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("app"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	mode := atomic.NewValue(c, "/config/mode")
	defer mode.Close(ctx) // deletes the handle's writer child; the value stays
	if err := mode.ForceSet(ctx, []byte("blue")); err != nil {
		log.Fatal(err)
	}
	r, err := mode.CompareAndSet(ctx, []byte("blue"), []byte("green"))
	fmt.Println(r.Succeeded, string(r.PreValue), string(r.PostValue), err)
	// Output:
	// true blue green <nil>
}

// A handle made per call, closed when done: nothing is left under the
// value's node, and a plain delete of it (Curator's
// client.delete().forPath) succeeds.
func ExampleNumber_Close() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("app"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	for i := 0; i < 3; i++ {
		visits := atomic.NewLong(c, "/counters/visits")
		if _, err := visits.Add(ctx, 1); err != nil {
			log.Fatal(err)
		}
		if err := visits.Close(ctx); err != nil {
			log.Fatal(err)
		}
	}
	kids, _, err := c.Children(ctx, "/counters/visits")
	fmt.Println("children:", len(kids), err)
	fmt.Println("delete:", c.Delete(ctx, "/counters/visits"))
	// Output:
	// children: 0 <nil>
	// delete: <nil>
}
