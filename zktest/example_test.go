package zktest_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/zktest"
)

// Programs (examples, benchmarks) launch a server without a testing.TB and
// close it themselves.
func ExampleLaunch() {
	srv, err := zktest.Launch(zktest.WithMaxHeapMB(128))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	ok, err := srv.FourLetterWord("ruok")
	if err != nil {
		log.Fatal(err)
	}
	mode, err := srv.Mode()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ok, mode)
	// Output: imok standalone
}

// A proxy between a client and the server can lose the reply to a create:
// the node is created, the client only sees the connection drop. (Cut and
// Restore partition the client and let it back the same way.)
func ExampleProxy_LoseNextCreateReply() {
	srv, err := zktest.Launch()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	proxy, err := zktest.ListenProxy(srv.Addr())
	if err != nil {
		log.Fatal(err)
	}
	defer proxy.Close()

	quiet := zk.WithLogger(log.New(io.Discard, "", 0))
	client, _, err := zk.Connect([]string{proxy.Addr()}, 10*time.Second, quiet)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	direct, _, err := zk.Connect([]string{srv.Addr()}, 10*time.Second, quiet)
	if err != nil {
		log.Fatal(err)
	}
	defer direct.Close()

	fired := proxy.LoseNextCreateReply()
	_, err = client.Create("/job", nil, 0, zk.WorldACL(zk.PermAll))
	<-fired
	fmt.Println("client:", err)
	exists, _, err := direct.Exists("/job")
	fmt.Println("on the server:", exists, err)
	// Output:
	// client: zk: connection closed
	// on the server: true <nil>
}

// An ensemble names its leader; after the leader dies, AwaitLeader waits
// for the next one.
func ExampleLaunchEnsemble() {
	ens, err := zktest.LaunchEnsemble(3)
	if err != nil {
		log.Fatal(err)
	}
	defer ens.Close()

	// Clients take every member: ens.ConnectString() is "127.0.0.1:port,...".
	fmt.Println("members:", len(strings.Split(ens.ConnectString(), ",")))
	leader, err := ens.Leader()
	if err != nil {
		log.Fatal(err)
	}
	if err := leader.Kill(); err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	next, err := ens.AwaitLeader(ctx, leader)
	if err != nil {
		log.Fatal(err)
	}
	mode, err := next.Mode()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("after the leader died, another member is", mode)
	// Output:
	// members: 3
	// after the leader died, another member is leader
}

// A delayed proxy models a network: here a 2 ms round trip (1 ms each
// way), so every request through it takes at least 2 ms longer.
func ExampleProxy_SetDelay() {
	srv, err := zktest.Launch()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	proxy, err := zktest.ListenProxy(srv.Addr())
	if err != nil {
		log.Fatal(err)
	}
	defer proxy.Close()
	proxy.SetDelay(time.Millisecond)

	quiet := zk.WithLogger(log.New(io.Discard, "", 0))
	client, _, err := zk.Connect([]string{proxy.Addr()}, 10*time.Second, quiet)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	start := time.Now()
	if _, _, err := client.Exists("/"); err != nil {
		log.Fatal(err)
	}
	fmt.Println("round trip at least 2ms:", time.Since(start) >= 2*time.Millisecond)
	// Output: round trip at least 2ms: true
}
