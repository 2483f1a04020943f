package cache_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/cache"
)

// The examples connect to the servers in $GOCURATOR_ZK, as the gocurator
// CLI does (the tests' TestMain sets it to the package's test server).

// A configuration map that reloads itself: every key is a child of
// /config, its value the child's data; the map is read from memory and
// follows every change.
func Example_configMap() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-config"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	defer c.Delete(ctx, "/config", framework.DeletingChildren(), framework.Quietly())
	if _, err := c.Create(ctx, "/config/timeout", []byte("5s"), framework.CreatingParents()); err != nil {
		log.Fatal(err)
	}

	config := cache.New(c, "/config", cache.WithMaxDepth(1))
	reloaded := make(chan string, 10)
	cancel := config.Listen(func(ev cache.Event) {
		if ev.Path == "/config" {
			return // the map itself
		}
		switch ev.Type {
		case cache.Created, cache.Changed:
			reloaded <- fmt.Sprintf("%s = %s", ev.Path, ev.Node.Data)
		case cache.Deleted:
			reloaded <- fmt.Sprintf("%s removed", ev.Path)
		}
	})
	defer cancel()
	if err := config.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer config.Close()
	fmt.Println(<-reloaded)

	// An operator changes the configuration (here: the same client).
	if _, err := c.Set(ctx, "/config/timeout", []byte("10s"), -1); err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-reloaded)
	timeout, _ := config.Get("/config/timeout")
	fmt.Printf("timeout is now %s\n", timeout.Data)
	// Output:
	// /config/timeout = 5s
	// /config/timeout = 10s
	// timeout is now 10s
}

// Synced is read-your-writes: once it returns, the cache holds every
// write that completed before it was called.
func ExampleCache_Synced() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-synced"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	defer c.Delete(ctx, "/jobs", framework.DeletingChildren(), framework.Quietly())

	jobs := cache.New(c, "/jobs")
	if err := jobs.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer jobs.Close()
	if _, err := c.Create(ctx, "/jobs/build/42", []byte("queued"), framework.CreatingParents()); err != nil {
		log.Fatal(err)
	}
	if err := jobs.Synced(ctx); err != nil {
		log.Fatal(err)
	}
	job, ok := jobs.Get("/jobs/build/42")
	fmt.Println(ok, string(job.Data), jobs.Children("/jobs"), jobs.Len())
	// Output:
	// true queued [build] 3
}

// SingleNode is Curator's NodeCache: one node, present or not.
func ExampleSingleNode() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-node"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	defer c.Delete(ctx, "/leader", framework.Quietly())

	leader := cache.New(c, "/leader", cache.SingleNode())
	if err := leader.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer leader.Close()
	_, ok := leader.Get("/leader")
	fmt.Println("leader known:", ok)
	if _, err := c.Create(ctx, "/leader", []byte("node-1"), framework.WithMode(framework.Ephemeral)); err != nil {
		log.Fatal(err)
	}
	if err := leader.Synced(ctx); err != nil {
		log.Fatal(err)
	}
	n, ok := leader.Get("/leader")
	fmt.Println("leader known:", ok, string(n.Data))
	// Output:
	// leader known: false
	// leader known: true node-1
}
