package node_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/node"
)

// The examples connect to the servers in $GOCURATOR_ZK, as the gocurator
// CLI does: a connect string such as "127.0.0.1:2181" (the tests' TestMain
// sets it to the package's test server).

// A worker registers itself for as long as it runs: its ephemeral node is
// made again after a session expiry or a delete, and never taken over from
// another process.
func ExampleNew() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-node"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	n := node.New(c, "/workers/worker-1", []byte("10.0.0.7:8080"))
	if err := n.Start(ctx); err != nil { // returns once the node exists
		log.Fatal(err)
	}
	defer n.Close(context.Background())
	data, _, err := c.Get(ctx, n.Path())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(n.Path(), string(data), n.Registered())
	// Output: /workers/worker-1 10.0.0.7:8080 true
}

// Listen tells why a node is being made again.
func ExampleNode_Listen() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-node-listen"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	n := node.New(c, "/workers/worker-2", nil)
	events := make(chan node.Event, 16)
	cancel := n.Listen(func(ev node.Event) { events <- ev })
	defer cancel()
	if err := n.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer n.Close(context.Background())
	var first int64
	for ev := range events {
		if ev.Reason != nil {
			fmt.Println(ev.State, ev.Reason)
		} else {
			fmt.Println(ev.State)
		}
		if ev.State != node.Registered {
			continue
		}
		if first != 0 {
			break // made again
		}
		first = ev.Czxid
		if err := c.Delete(ctx, n.Path()); err != nil { // an operator's mistake
			log.Fatal(err)
		}
	}
	// Output:
	// creating
	// registered
	// recreating curator: node deleted
	// registered
}

// A TTL node (Curator's PersistentTtlNode) is touched while its process
// runs, and reaped by the server if the process dies; Close deletes it.
func ExampleWithTTL() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-node-ttl"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	n := node.New(c, "/leases/batch-7", []byte("running"), node.WithTTL(time.Minute))
	if err := n.Start(ctx); err != nil {
		log.Fatal(err)
	}
	children, _, err := c.Children(ctx, n.Path())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(children)
	if err := n.Close(ctx); err != nil { // deletes the touch child, then the node
		log.Fatal(err)
	}
	st, err := c.Exists(ctx, n.Path())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st == nil)
	// Output:
	// [touch]
	// true
}

// With ExpireAfterClose a TTL node outlives Close by up to about twice its
// TTL, as Curator's PersistentTtlNode does: a stopped service stays listed
// for a grace period, then the server deletes it.
func ExampleExpireAfterClose() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-node-expire"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	n := node.New(c, "/services/api-1", []byte("10.0.0.7:8080"), node.WithTTL(time.Minute), node.ExpireAfterClose())
	if err := n.Start(ctx); err != nil {
		log.Fatal(err)
	}
	if err := n.Close(ctx); err != nil { // stops the touches only
		log.Fatal(err)
	}
	data, _, err := c.Get(ctx, n.Path())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(data))
	// The server would delete it within two minutes; the example does not
	// wait.
	if err := c.Delete(ctx, n.Path(), framework.DeletingChildren()); err != nil {
		log.Fatal(err)
	}
	// Output: 10.0.0.7:8080
}

// A protected sequential node: named once, made again under that name.
func ExampleOption() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-node-option"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	n := node.New(c, "/instances/api-", nil, node.WithMode(framework.EphemeralSequential), node.Protected())
	if err := n.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer n.Close(context.Background())
	_, name := framework.SplitPath(n.Path())
	fmt.Println(framework.IsProtected(name), framework.StripProtected(name))
	// Output: true api-0000000000
}

// Status tells where a Node stands, and for a registered node which
// session owns it.
func ExampleEvent() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-node-event"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	n := node.New(c, "/workers/worker-3", nil)
	fmt.Println(n.Status().State)
	if err := n.Start(ctx); err != nil {
		log.Fatal(err)
	}
	st := n.Status()
	fmt.Println(st.State, st.Session == c.SessionID())
	if err := n.Close(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println(n.Status().State)
	// Output:
	// idle
	// registered true
	// closed
}

func ExampleState() {
	fmt.Println(node.Registered, node.Recreating)
	// Output: registered recreating
}
