package barrier_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"golang.org/x/sync/errgroup"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/barrier"
)

// The examples connect to the servers in $GOCURATOR_ZK, as the gocurator
// CLI does: a connect string such as "127.0.0.1:2181" (the tests' TestMain
// sets it to the package's test server).

func ExampleBarrier() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("app"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	gate := barrier.New(c, "/gates/migration")
	if err := gate.Set(ctx); err != nil { // closed until the migration is done
		log.Fatal(err)
	}
	opened := make(chan error, 1)
	go func() { opened <- gate.Wait(ctx) }() // workers wait here

	if err := gate.Remove(ctx); err != nil { // the migration is done
		log.Fatal(err)
	}
	fmt.Println("workers go:", <-opened)
	// Output:
	// workers go: <nil>
}

func ExampleDouble() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("app"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	// Three workers (in one process here; usually one per process) start
	// a step together and finish it together.
	var g errgroup.Group
	for i := 0; i < 3; i++ {
		member := barrier.NewDouble(c, "/barriers/step-1", 3)
		g.Go(func() error {
			if err := member.Enter(ctx); err != nil {
				return err
			}
			// ... the step's work ...
			return member.Leave(ctx)
		})
	}
	fmt.Println("step done:", g.Wait())
	// Output:
	// step done: <nil>
}
