package group_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"slices"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/group"
)

// The examples connect to the servers in $GOCURATOR_ZK, as the gocurator
// CLI does: a connect string such as "127.0.0.1:2181" (the tests' TestMain
// sets it to the package's test server).

// A worker registry: each worker joins the group with its address as
// payload, and any of them lists the others.
func ExampleNew() {
	ctx := context.Background()
	var workers []*group.Member
	for _, w := range []struct{ id, addr string }{{"worker-1", "10.0.0.7:8080"}, {"worker-2", "10.0.0.8:8080"}} {
		c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-group"))
		if err != nil {
			log.Fatal(err)
		}
		defer c.Close()
		m := group.New(c, "/registry/workers", w.id, []byte(w.addr))
		if err := m.Start(ctx); err != nil {
			log.Fatal(err)
		}
		defer m.Close(context.Background())
		workers = append(workers, m)
	}

	// worker-2 joined after worker-1 loaded its cache: wait for the news.
	joined := make(chan struct{})
	cancel := workers[0].Listen(func(ev group.Event) {
		if ev.Type == group.Joined && ev.ID == "worker-2" {
			close(joined)
		}
	})
	defer cancel()
	if _, ok := workers[0].Members()["worker-2"]; !ok {
		<-joined
	}
	members := workers[0].Members()
	ids := make([]string, 0, len(members))
	for id := range members {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		fmt.Println(id, string(members[id]))
	}
	// Output:
	// worker-1 10.0.0.7:8080
	// worker-2 10.0.0.8:8080
}

// A second process with an id already in the group is refused with
// FailIfOwned (by default it would wait for the id to be free), where
// Curator's GroupMember would share the first one's node.
func ExampleMember_Start() {
	ctx := context.Background()
	connect := func() *framework.Client {
		c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-group-dup"))
		if err != nil {
			log.Fatal(err)
		}
		return c
	}
	c1, c2 := connect(), connect()
	defer c1.Close()
	defer c2.Close()
	first := group.New(c1, "/registry/workers", "worker-1", []byte("first"))
	if err := first.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer first.Close(context.Background())
	second := group.New(c2, "/registry/workers", "worker-1", []byte("second"), group.FailIfOwned())
	err := second.Start(ctx)
	fmt.Println(errors.Is(err, group.ErrOwnedByOtherSession))
	_ = second.Close(ctx)
	// Output: true
}

// Listen reports members joining, leaving and changing their payloads,
// which Curator's GroupMember does not.
func ExampleMember_Listen() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-group-listen"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	m := group.New(c, "/registry/workers", "watcher", []byte("w"))
	events := make(chan group.Event, 16)
	cancel := m.Listen(func(ev group.Event) { events <- ev })
	defer cancel()
	if err := m.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer m.Close(context.Background())
	// A listener that falls behind hears the latest state of a member
	// (a join and an update merged into one join), so each change waits
	// for its event here.
	heard := func(want group.EventType) {
		for ev := range events {
			if ev.ID == "worker-9" {
				fmt.Println(ev.Type, ev.ID, string(ev.Payload))
				if ev.Type == want {
					return
				}
			}
		}
	}
	other := group.New(c, "/registry/workers", "worker-9", []byte("10.0.0.9:8080"))
	if err := other.Start(ctx); err != nil {
		log.Fatal(err)
	}
	heard(group.Joined)
	if err := other.SetPayload(ctx, []byte("10.0.0.9:9090")); err != nil {
		log.Fatal(err)
	}
	heard(group.Updated)
	if err := other.Close(ctx); err != nil {
		log.Fatal(err)
	}
	heard(group.Left)
	// Output:
	// joined worker-9 10.0.0.9:8080
	// updated worker-9 10.0.0.9:9090
	// left worker-9 10.0.0.9:9090
}

// WaitForOwner joins once the id is free, rather than failing.
func ExampleWaitForOwner() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-group-wait"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	m := group.New(c, "/registry/workers", "worker-1", nil, group.WaitForOwner())
	if err := m.Start(ctx); err != nil { // the id is free: joins at once
		log.Fatal(err)
	}
	defer m.Close(context.Background())
	fmt.Println(m.Node().Registered())
	// Output: true
}

func ExampleEventType() {
	fmt.Println(group.Joined, group.Left, group.Updated)
	// Output: joined left updated
}
