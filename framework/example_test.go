package framework_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"regexp"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/zktest"
)

// The examples connect to the servers in $GOCURATOR_ZK, a connect string
// such as "127.0.0.1:2181" (in the package's tests: its test server's).

func ExampleConnect() {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	// A connect string may end with a chroot: here /example-connect.
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK")+"/example-connect",
		framework.WithNamespace("orders"),
		framework.WithSessionTimeout(30*time.Second),
		framework.WithRetryPolicy(retry.BoundedExponentialBackoff(100*time.Millisecond, 5*time.Second, 10)),
	)
	if err != nil {
		log.Fatal(err) // ctx's error if no session came up in time
	}
	defer c.Close() // ends the session: its ephemeral nodes go at once

	// Paths are relative to the chroot and namespace: this is
	// /example-connect/orders/config.
	if _, err := c.Create(ctx, "/config", []byte("v1"), framework.CreatingParentContainers()); err != nil {
		log.Fatal(err)
	}
	data, _, err := c.Get(ctx, "/config")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", data)
	// The chroot and namespace are containers: the server removes them
	// once their last child is gone.
	if err := c.Delete(ctx, "/config"); err != nil {
		log.Fatal(err)
	}
	// Output: v1
}

func ExampleClient_Create() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-create"))
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
	uuid := regexp.MustCompile(`_c_[0-9a-f-]{36}-`)
	fmt.Println(uuid.ReplaceAllString(path, "_c_<uuid>-"))
	// Output: /locks/orders/_c_<uuid>-lock-0000000000
}

func ExampleClient_Listen() {
	ctx := context.Background()
	// A proxy stands in for the network, so that the example can cut it.
	proxy, err := zktest.ListenProxy(os.Getenv("GOCURATOR_ZK"))
	if err != nil {
		log.Fatal(err)
	}
	defer proxy.Close()
	c, err := framework.Connect(ctx, proxy.Addr())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	// Listeners run on a goroutine of their own, in order, and may block
	// without holding up the client.
	seen := make(chan connstate.State, 1)
	cancel := c.Listen(func(s connstate.State) {
		switch s {
		case connstate.Suspended:
			fmt.Println("connection lost; the session may survive")
		case connstate.Lost:
			fmt.Println("session expired: ephemeral nodes and watches are gone")
		case connstate.Reconnected:
			fmt.Println("connected again")
		}
		seen <- s
	})
	defer cancel()

	proxy.Cut()
	<-seen // Suspended
	proxy.Restore()
	<-seen // Reconnected, to the same session
	// Output:
	// connection lost; the session may survive
	// connected again
}

func ExampleClient_Delete() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-delete"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Create(ctx, "/jobs/job-1", nil, framework.CreatingParentContainers()); err != nil {
		log.Fatal(err)
	}

	// A guaranteed delete that fails for a connection problem (or because
	// ctx ended) keeps trying in the background until it succeeds or the
	// client closes. The error still says the node may exist for a while.
	dctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := c.Delete(dctx, "/jobs/job-1", framework.Guaranteed(), framework.Quietly()); err != nil {
		fmt.Println("delete pending in the background:", err)
		return
	}
	stat, err := c.Exists(ctx, "/jobs/job-1")
	fmt.Println("exists:", stat != nil, err)
	// Output: exists: false <nil>
}

func ExampleClient_NewSession() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-new-session"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Create(ctx, "/config", []byte("v1"), framework.CreatingParentContainers()); err != nil {
		log.Fatal(err)
	}

	// The server answers one session's requests in order: a burst of
	// reads spread over a second session is served alongside.
	s, err := c.NewSession(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	data, _, err := s.Get(ctx, "/config") // the same namespace
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s, another session: %v\n", data, s.SessionID() != c.SessionID())
	if err := c.Delete(ctx, "/config"); err != nil {
		log.Fatal(err)
	}
	// Output: v1, another session: true
}

func ExampleClient_JuteMaxBuffer() {
	ctx := context.Background()
	// Servers run with -Djute.maxbuffer=4194304: say so, and the client's
	// size checks and the recipes' listing checks use it.
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithJuteMaxBuffer(4<<20))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fmt.Println(c.JuteMaxBuffer())
	// Output: 4194304
}
