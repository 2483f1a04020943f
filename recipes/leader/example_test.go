package leader_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/leader"
)

// The examples connect to the servers in $GOCURATOR_ZK, as the gocurator
// CLI does: a connect string such as "127.0.0.1:2181" (the tests' TestMain
// sets it to the package's test server).

func ExampleElection_Campaign() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-campaign"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	e := leader.New(c, "/elections/scheduler", leader.WithID("node-1"))
	term, err := e.Campaign(ctx) // blocks until we lead
	if err != nil {
		log.Fatal(err)
	}
	defer term.Resign(context.Background())
	who, err := e.Leader(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("leader:", who.ID)
	// Output: leader: node-1
}

// A term looks like a context: stop leading when Done closes.
func ExampleTerm_Done() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-done"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	term, err := leader.New(c, "/elections/indexer").Campaign(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if err := term.Resign(ctx); err != nil {
		log.Fatal(err)
	}
	<-term.Done()
	fmt.Println(errors.Is(term.Err(), leader.ErrResigned))
	// Output: true
}

// FencedMulti makes ZooKeeper refuse a deposed leader's write.
func ExampleTerm_FencedMulti() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-fenced"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Create(ctx, "/config", nil); err != nil {
		log.Fatal(err)
	}

	e := leader.New(c, "/elections/config")
	term, err := e.Campaign(ctx)
	if err != nil {
		log.Fatal(err)
	}
	_, err = term.FencedMulti(ctx, framework.SetOp("/config", []byte("v1"), -1))
	fmt.Println("while leading:", err)
	_ = term.Resign(ctx)
	_, err = term.FencedMulti(ctx, framework.SetOp("/config", []byte("v2"), -1))
	fmt.Println("after resigning refused:", err != nil)
	// Output:
	// while leading: <nil>
	// after resigning refused: true
}

// Run is Curator's LeaderSelector with auto-requeue: the work runs only
// while we lead.
func ExampleElection_Run() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-run"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	e := leader.New(c, "/elections/reports", leader.SelectorLayout(), leader.WithID("worker-7"))
	err = e.Run(ctx, func(ctx context.Context) error {
		fmt.Println("leading; doing the singleton work")
		cancel() // here: stop after one term
		return nil
	})
	fmt.Println(errors.Is(err, context.Canceled))
	// Output:
	// leading; doing the singleton work
	// true
}

// Observe reports every change of leader, "no leader" included.
func ExampleElection_Observe() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-observe"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	e := leader.New(c, "/elections/cache", leader.WithID("a"))
	events := e.Observe(ctx)
	fmt.Println("no leader:", (<-events).NoLeader())
	term, err := e.Campaign(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("leader:", (<-events).Leader.ID)
	_ = term.Resign(ctx)
	fmt.Println("no leader:", (<-events).NoLeader())
	// Output:
	// no leader: true
	// leader: a
	// no leader: true
}

// A Latch is Curator's LeaderLatch: a candidate in the background, with
// HasLeadership and isLeader/notLeader callbacks.
func ExampleElection_Start() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-latch"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	leading := make(chan struct{})
	latch := leader.New(c, "/elections/latch", leader.WithID("n1")).Start(leader.Listener{
		IsLeader:  func(*leader.Term) { fmt.Println("isLeader"); close(leading) },
		NotLeader: func(err error) { fmt.Println("notLeader:", errors.Is(err, leader.ErrResigned)) },
	})
	<-leading
	fmt.Println("has leadership:", latch.HasLeadership())
	if err := latch.Close(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("has leadership:", latch.HasLeadership())
	// Output:
	// isLeader
	// has leadership: true
	// notLeader: true
	// has leadership: false
}
