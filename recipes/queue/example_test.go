package queue_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/queue"
)

// The examples connect to the servers in $GOCURATOR_ZK, as the gocurator
// CLI does: a connect string such as "127.0.0.1:2181" (the tests' TestMain
// sets it to the package's test server).

// Producers Put, a consumer function gets each item once; with a lock path
// an item is removed only after the function returned nil for it.
func ExampleQueue_Consume() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-consume"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	q := queue.New(c, "/jobs", queue.WithLockPath("/jobs-locks"))
	for _, job := range []string{"resize", "thumbnail"} {
		if err := q.Put(ctx, []byte(job)); err != nil {
			log.Fatal(err)
		}
	}
	if err := q.PutMulti(ctx, [][]byte{[]byte("index-a"), []byte("index-b")}); err != nil {
		log.Fatal(err)
	}

	cctx, stop := context.WithCancel(ctx)
	n := 0
	err = q.Consume(cctx, func(ctx context.Context, it queue.Item) error {
		fmt.Printf("%s (item %d of %d)\n", it.Data, it.Index+1, it.Count)
		if n++; n == 4 {
			stop()
		}
		return nil
	})
	fmt.Println(errors.Is(err, context.Canceled))
	// Output:
	// resize (item 1 of 1)
	// thumbnail (item 1 of 1)
	// index-a (item 1 of 2)
	// index-b (item 2 of 2)
	// true
}

// Fenced consumption: the work and the item's removal in one transaction,
// so the work is recorded once even if this consumer's session dies and
// another consumer takes the item meanwhile.
func ExampleItem_RemoveOps() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-fenced"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	q := queue.New(c, "/orders", queue.WithLockPath("/orders-locks"))
	if err := q.Put(ctx, []byte("order-17")); err != nil {
		log.Fatal(err)
	}
	cctx, stop := context.WithCancel(ctx)
	_ = q.Consume(cctx, func(ctx context.Context, it queue.Item) error {
		defer stop()
		done := framework.CreateOp("/shipped-"+string(it.Data), nil, framework.Persistent)
		_, err := c.Multi(ctx, append([]framework.Op{done}, it.RemoveOps()...)...)
		return err
	})
	st, _ := c.Exists(ctx, "/shipped-order-17")
	left, _, _ := c.Children(ctx, "/orders")
	fmt.Println(st != nil, len(left))
	// Output:
	// true 0
}

// SimpleDistributedQueue's shape: Offer, then Take blocks until an item.
func ExampleSimple() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-simple"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	s := queue.NewSimple(c, "/tasks")
	if err := s.Offer(ctx, []byte("first")); err != nil {
		log.Fatal(err)
	}
	if err := s.Offer(ctx, []byte("second")); err != nil {
		log.Fatal(err)
	}
	head, _, _ := s.Peek(ctx)
	fmt.Printf("peek: %s\n", head)
	d, err := s.Take(ctx)
	fmt.Printf("take: %s %v\n", d, err)
	d, ok, err := s.Poll(ctx)
	fmt.Printf("poll: %s %v %v\n", d, ok, err)
	_, ok, _ = s.Poll(ctx)
	fmt.Println("empty:", !ok)
	// Output:
	// peek: first
	// take: first <nil>
	// poll: second true <nil>
	// empty: true
}

// A queue of values: Typed encodes them with a Codec (JSON here) and
// hands them over decoded.
func ExampleTyped() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-typed"))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	type job struct {
		ID   int
		Name string
	}
	jobs := queue.NewTyped(queue.New(c, "/jobs"), queue.JSON[job]{})
	if err := jobs.Put(ctx, job{ID: 7, Name: "resize"}); err != nil {
		panic(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	_ = jobs.Consume(cctx, func(_ context.Context, j job, _ queue.Item) error {
		fmt.Println(j.ID, j.Name)
		cancel()
		return nil
	})
	_ = c.Delete(ctx, "/jobs", framework.DeletingChildren())
	// Output: 7 resize
}
