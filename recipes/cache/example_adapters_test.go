package cache_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/cache"
)

// connectExample connects to $GOCURATOR_ZK in a namespace of the
// example's own.
func connectExample(ctx context.Context, ns string) *framework.Client {
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace(ns))
	if err != nil {
		log.Fatal(err)
	}
	return c
}

// Handlers ports a CuratorCacheListener.builder(): forCreates,
// forChanges, forDeletes and forInitialized, afterInitialized() so that
// the nodes the load finds are not reported one by one.
func ExampleHandlers() {
	ctx := context.Background()
	c := connectExample(ctx, "example-handlers")
	defer c.Close()
	defer c.Delete(ctx, "/flags", framework.DeletingChildren(), framework.Quietly())
	if _, err := c.Create(ctx, "/flags/dark-mode", []byte("off"), framework.CreatingParents()); err != nil {
		log.Fatal(err)
	}

	flags := cache.New(c, "/flags")
	seen := make(chan string, 10)
	cancel := flags.Listen(cache.Handlers{
		Creates:     func(n cache.Node) { seen <- fmt.Sprintf("created %s = %s", n.Path, n.Data) },
		Changes:     func(old, n cache.Node) { seen <- fmt.Sprintf("changed %s: %s -> %s", n.Path, old.Data, n.Data) },
		Deletes:     func(n cache.Node) { seen <- fmt.Sprintf("deleted %s", n.Path) },
		Initialized: func() { seen <- "initialized" },
		// Like afterInitialized(): no "created" for what the load found.
		AfterInitialized: true,
	}.Listener())
	defer cancel()
	if err := flags.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer flags.Close()
	fmt.Println(<-seen)
	if _, err := c.Set(ctx, "/flags/dark-mode", []byte("on"), -1); err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-seen)
	if _, err := c.Create(ctx, "/flags/beta", []byte("all")); err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-seen)
	if err := c.Delete(ctx, "/flags/beta"); err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-seen)
	// Output:
	// initialized
	// changed /flags/dark-mode: off -> on
	// created /flags/beta = all
	// deleted /flags/beta
}

// ForPathChildren ports a PathChildrenCacheListener: the children of
// /workers as CHILD_ADDED, CHILD_UPDATED, CHILD_REMOVED, and INITIALIZED
// (PathChildrenCache's StartMode.POST_INITIALIZED_EVENT).
func ExampleForPathChildren() {
	ctx := context.Background()
	c := connectExample(ctx, "example-children")
	defer c.Close()
	defer c.Delete(ctx, "/workers", framework.DeletingChildren(), framework.Quietly())
	if _, err := c.Create(ctx, "/workers/w1", []byte("idle"), framework.CreatingParents()); err != nil {
		log.Fatal(err)
	}

	workers := cache.New(c, "/workers", cache.WithMaxDepth(1))
	seen := make(chan cache.ChildEvent, 10)
	cancel := workers.Listen(cache.ForPathChildren("/workers", func(ev cache.ChildEvent) { seen <- ev }))
	defer cancel()
	if err := workers.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer workers.Close()
	show := func(ev cache.ChildEvent) {
		if ev.Node.Path == "" {
			fmt.Println(ev.Type)
			return
		}
		fmt.Println(ev.Type, ev.Node.Path, string(ev.Node.Data))
	}
	show(<-seen)
	show(<-seen)
	if _, err := c.Set(ctx, "/workers/w1", []byte("busy"), -1); err != nil {
		log.Fatal(err)
	}
	// Each event is read before the next write: a listener slower than
	// the changes gets each child's outcome (see Event.Coalesced).
	show(<-seen)
	if err := c.Delete(ctx, "/workers/w1"); err != nil {
		log.Fatal(err)
	}
	show(<-seen)
	// Output:
	// CHILD_ADDED /workers/w1 idle
	// INITIALIZED
	// CHILD_UPDATED /workers/w1 busy
	// CHILD_REMOVED /workers/w1 busy
}

// ForTree ports a TreeCacheListener: every node of the subtree as
// NODE_ADDED, NODE_UPDATED, NODE_REMOVED, and INITIALIZED.
func ExampleForTree() {
	ctx := context.Background()
	c := connectExample(ctx, "example-tree")
	defer c.Close()
	defer c.Delete(ctx, "/app", framework.DeletingChildren(), framework.Quietly())
	if _, err := c.Create(ctx, "/app", []byte("v1")); err != nil {
		log.Fatal(err)
	}

	app := cache.New(c, "/app")
	seen := make(chan cache.TreeEvent, 10)
	cancel := app.Listen(cache.ForTree(func(ev cache.TreeEvent) { seen <- ev }))
	defer cancel()
	if err := app.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer app.Close()
	if _, err := c.Create(ctx, "/app/db/url", []byte("zk://db"), framework.CreatingParents()); err != nil {
		log.Fatal(err)
	}
	if _, err := c.Set(ctx, "/app", []byte("v2"), -1); err != nil {
		log.Fatal(err)
	}
	for range 5 {
		switch ev := <-seen; ev.Type {
		case cache.TreeInitialized:
			fmt.Println(ev.Type)
		case cache.NodeUpdated:
			fmt.Printf("%v %s %q -> %q\n", ev.Type, ev.Node.Path, ev.Old.Data, ev.Node.Data)
		default:
			fmt.Printf("%v %s %q\n", ev.Type, ev.Node.Path, ev.Node.Data)
		}
	}
	// Output:
	// NODE_ADDED /app "v1"
	// INITIALIZED
	// NODE_ADDED /app/db ""
	// NODE_ADDED /app/db/url "zk://db"
	// NODE_UPDATED /app "v1" -> "v2"
}

// ForNode ports a NodeCacheListener: nodeChanged, with the node and
// whether it exists, for a cache made SingleNode (Curator's NodeCache).
func ExampleForNode() {
	ctx := context.Background()
	c := connectExample(ctx, "example-fornode")
	defer c.Close()
	defer c.Delete(ctx, "/leader", framework.Quietly())

	leader := cache.New(c, "/leader", cache.SingleNode())
	changed := make(chan string, 10)
	cancel := leader.Listen(cache.ForNode("/leader", func(n cache.Node, exists bool) {
		if !exists {
			changed <- "no leader"
			return
		}
		changed <- "leader is " + string(n.Data)
	}))
	defer cancel()
	if err := leader.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer leader.Close()
	if _, err := c.Create(ctx, "/leader", []byte("node-1"), framework.WithMode(framework.Ephemeral)); err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-changed)
	if err := c.Delete(ctx, "/leader"); err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-changed)
	// Output:
	// leader is node-1
	// no leader
}

// ChildEventType prints as Curator's PathChildrenCacheEvent.Type.
func ExampleChildEventType() {
	for _, t := range []cache.ChildEventType{cache.ChildAdded, cache.ChildUpdated, cache.ChildRemoved, cache.ChildrenInitialized, cache.ChildrenReconnected} {
		fmt.Println(t)
	}
	// Output:
	// CHILD_ADDED
	// CHILD_UPDATED
	// CHILD_REMOVED
	// INITIALIZED
	// CONNECTION_RECONNECTED
}

// TreeEventType prints as Curator's TreeCacheEvent.Type.
func ExampleTreeEventType() {
	for _, t := range []cache.TreeEventType{cache.NodeAdded, cache.NodeUpdated, cache.NodeRemoved, cache.TreeInitialized, cache.TreeReconnected} {
		fmt.Println(t)
	}
	// Output:
	// NODE_ADDED
	// NODE_UPDATED
	// NODE_REMOVED
	// INITIALIZED
	// CONNECTION_RECONNECTED
}
