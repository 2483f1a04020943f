package queue_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/queue"
)

// consumeN runs consume until it has seen n items.
func consumeN(q interface {
	Consume(context.Context, func(context.Context, queue.Item) error) error
}, n int, fn func(queue.Item)) {
	ctx, stop := context.WithCancel(context.Background())
	_ = q.Consume(ctx, func(_ context.Context, it queue.Item) error {
		fn(it)
		if n--; n == 0 {
			stop()
		}
		return nil
	})
}

// Items put with an id can be removed before anyone consumes them.
func ExampleIDQueue() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-idqueue"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	q := queue.NewID(c, "/emails")
	for _, p := range [][2]string{{"order-1", "receipt"}, {"order-2", "receipt"}, {"order-1", "survey"}} {
		if err := q.PutID(ctx, p[0], []byte(p[1])); err != nil {
			log.Fatal(err)
		}
	}
	n, err := q.Remove(ctx, "order-1") // order 1 was cancelled
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("removed", n)
	consumeN(q, 1, func(it queue.Item) { fmt.Println(it.ID, string(it.Data)) })
	// Output:
	// removed 2
	// order-2 receipt
}

// Lower priorities come out first; equal ones in put order.
func ExamplePriorityQueue() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-priorityqueue"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	q := queue.NewPriority(c, "/builds")
	for _, p := range []struct {
		job      string
		priority int
	}{{"nightly", 10}, {"hotfix", -5}, {"branch", 0}, {"docs", 10}} {
		if err := q.Put(ctx, []byte(p.job), p.priority); err != nil {
			log.Fatal(err)
		}
	}
	consumeN(q, 4, func(it queue.Item) { fmt.Println(it.Priority, string(it.Data)) })
	// Output:
	// -5 hotfix
	// 0 branch
	// 10 nightly
	// 10 docs
}

// An item is delivered no earlier than its time; the consumer sleeps
// until then.
func ExampleDelayQueue() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-delayqueue"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	q := queue.NewDelay(c, "/reminders")
	start := time.Now()
	if err := q.Put(ctx, []byte("in 200ms"), start.Add(200*time.Millisecond)); err != nil {
		log.Fatal(err)
	}
	if err := q.Put(ctx, []byte("now"), start); err != nil {
		log.Fatal(err)
	}
	consumeN(q, 2, func(it queue.Item) {
		fmt.Println(string(it.Data), !time.Now().Before(it.Due))
	})
	// Output:
	// now true
	// in 200ms true
}
