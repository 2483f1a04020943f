package framework_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/retry"
)

// These examples need a ZooKeeper server on 127.0.0.1:2181, so they are
// compiled but not run.

func ExampleConnect() {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c, err := framework.Connect(ctx, "127.0.0.1:2181,127.0.0.1:2182/chroot",
		framework.WithNamespace("orders"),
		framework.WithSessionTimeout(30*time.Second),
		framework.WithRetryPolicy(retry.BoundedExponentialBackoff(100*time.Millisecond, 5*time.Second, 10)),
	)
	if err != nil {
		log.Fatal(err) // ctx's error if no session came up in time
	}
	defer c.Close() // ends the session: its ephemeral nodes go at once

	// Paths are relative to the namespace: this is /chroot/orders/config.
	if _, err := c.Create(ctx, "/config", []byte("v1"), framework.CreatingParentContainers()); err != nil {
		log.Fatal(err)
	}
	data, _, err := c.Get(ctx, "/config")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", data)
}

func ExampleClient_Create() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, "127.0.0.1:2181")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	// A protected, ephemeral-sequential node, as lock recipes make: if the
	// reply is lost with the connection, the retry finds the node the
	// server made instead of making a second one.
	path, err := c.Create(ctx, "/locks/orders/lock-", nil,
		framework.WithMode(framework.EphemeralSequential),
		framework.Protected(),
		framework.CreatingParentContainers(),
	)
	if err != nil {
		log.Fatal(err)
	}
	// path is like /locks/orders/_c_<uuid>-lock-0000000007.
	fmt.Println(path)
}

func ExampleClient_Listen() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, "127.0.0.1:2181")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	// Listeners run on a goroutine of their own, in order, and may block
	// without holding up the client.
	cancel := c.Listen(func(s connstate.State) {
		switch s {
		case connstate.Suspended:
			log.Print("connection lost; the session may survive")
		case connstate.Lost:
			log.Print("session expired: ephemeral nodes and watches are gone")
		case connstate.Reconnected:
			log.Print("connected again")
		}
	})
	defer cancel()
}

func ExampleClient_Delete() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, "127.0.0.1:2181")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	// A guaranteed delete that fails for a connection problem (or because
	// ctx ended) keeps trying in the background until it succeeds or the
	// client closes. The error still says the node may exist for a while.
	dctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	err = c.Delete(dctx, "/locks/orders/lock-node", framework.Guaranteed(), framework.Quietly())
	if err != nil && !errors.Is(err, framework.ErrClosed) {
		log.Printf("delete pending in the background: %v", err)
	}
}
