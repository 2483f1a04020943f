package shared_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/shared"
)

// The examples connect to the servers in $GOCURATOR_ZK, as the gocurator
// CLI does: a connect string such as "127.0.0.1:2181" (the tests' TestMain
// sets it to the package's test server).

func ExampleCount() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("app"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	workers := shared.NewCount(c, "/config/max-workers", 3)
	if err := workers.Set(ctx, 3); err != nil {
		log.Fatal(err)
	}
	// Compare-and-set: a write based on a stale read is refused.
	prev, err := workers.GetVersioned(ctx)
	if err != nil {
		log.Fatal(err)
	}
	ok, err := workers.TrySet(ctx, prev, prev.Value+1)
	fmt.Println("raised to 4:", ok, err)
	ok, err = workers.TrySet(ctx, prev, 10)
	fmt.Println("stale write applied:", ok, err)
	n, err := workers.Get(ctx)
	fmt.Println("max workers:", n, err)
	// Output:
	// raised to 4: true <nil>
	// stale write applied: false <nil>
	// max workers: 4 <nil>
}

// Start keeps a cached copy current; Listen reports every new value.
func ExampleCount_Listen() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("app"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	limit := shared.NewCount(c, "/config/rate-limit", 100)
	if err := limit.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer limit.Close()
	changed := make(chan int, 1)
	cancel := limit.Listen(func(v int) { changed <- v })
	defer cancel()

	// Another process (here: another handle) changes the value.
	if err := shared.NewCount(c, "/config/rate-limit", 100).Set(ctx, 250); err != nil {
		log.Fatal(err)
	}
	fmt.Println("new limit:", <-changed)
	fmt.Println("cached:", limit.Value())
	// Output:
	// new limit: 250
	// cached: 250
}
