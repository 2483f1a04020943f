package queue_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/queue"
)

// Background puts (Curator's putInBackground): PutAsync returns once the
// item is accepted, a listener hears each completed put, Flush waits for
// them all (Curator's flushPuts). Puts that wait together go to ZooKeeper
// in one transaction, each its own node.
func ExampleQueue_PutAsync() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-put-async"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	done := 0
	q := queue.New(c, "/events",
		queue.WithPutBuffer(100), // PutAsync blocks while 100 puts wait
		queue.WithPutListener(func(ev queue.PutEvent) {
			if ev.Err != nil {
				log.Printf("put %q: %v", ev.Items, ev.Err)
				return
			}
			done++ // background puts are told on one goroutine, in order
		}))
	defer q.Close(ctx) // writes what still waits
	for i := range 10 {
		if err := q.PutAsync(ctx, []byte(fmt.Sprint("click ", i))); err != nil {
			log.Fatal(err)
		}
	}
	if err := q.Flush(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println(done, "puts written")
	// Output:
	// 10 puts written
}

// PutMultiAsync puts several items as one node, in the background; Flush
// returns the failures of the puts it waited for.
func ExampleQueue_PutMultiAsync() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-put-multi-async"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	var names []string
	q := queue.New(c, "/events", queue.WithPutListener(func(ev queue.PutEvent) {
		names = append(names, fmt.Sprintf("%d items", len(ev.Items)))
	}))
	defer q.Close(ctx)
	if err := q.PutMultiAsync(ctx, [][]byte{[]byte("a"), []byte("b"), []byte("c")}); err != nil {
		log.Fatal(err)
	}
	fmt.Println(q.Flush(ctx), names)
	// Output:
	// <nil> [3 items]
}
