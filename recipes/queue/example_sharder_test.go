package queue_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/queue"
)

// A sharded queue: producers Put through the sharder, which picks a
// shard; a consumer Consumes every shard, those added later too. Items
// keep their order within a shard only.
func ExampleSharder() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-sharder"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	s := queue.NewSharder(c, "/jobs", "/jobs-leader",
		queue.WithNewQueueThreshold(5000),        // add a shard when one holds 5000 items
		queue.WithThresholdCheck(10*time.Second), // look every 10 s
		queue.WithMaxQueues(4))                   // up to 4 shards
	if err := s.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer s.Close(ctx)
	fmt.Println("shards:", s.ShardCount())

	for _, job := range []string{"resize", "thumbnail", "index"} {
		if err := s.Put(ctx, []byte(job)); err != nil {
			log.Fatal(err)
		}
	}

	cctx, stop := context.WithCancel(ctx)
	var mu sync.Mutex // fn runs for several shards at once
	var got []string
	err = s.Consume(cctx, func(ctx context.Context, it queue.Item) error {
		mu.Lock()
		defer mu.Unlock()
		if got = append(got, string(it.Data)); len(got) == 3 {
			stop()
		}
		return nil
	})
	slices.Sort(got)
	fmt.Println(got, errors.Is(err, context.Canceled))
	// Output:
	// shards: 1
	// [index resize thumbnail] true
}

// Queue returns a shard to put into, as Curator's getQueue: here a
// PutMulti, whose items stay together in one node of one shard.
func ExampleSharder_Queue() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-sharder-queue"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	s := queue.NewSharder(c, "/jobs", "/jobs-leader")
	if err := s.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer s.Close(ctx)
	q, err := s.Queue()
	if err != nil {
		log.Fatal(err)
	}
	if err := q.PutMulti(ctx, [][]byte{[]byte("a"), []byte("b")}); err != nil {
		log.Fatal(err)
	}
	fmt.Println(slices.Equal(s.ShardPaths(), []string{q.Path()}), strings.HasPrefix(q.Path(), "/jobs/queue-"))
	// Output:
	// true true
}

// Each shard gets options of its own from its path: here Curator's
// lock-safety mode, with a lock path per shard.
func ExampleWithShardOptions() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-shard-options"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	s := queue.NewSharder(c, "/jobs", "/jobs-leader", queue.WithShardOptions(func(shardPath string) []queue.Option {
		// Outside /jobs: every child of /jobs is a shard.
		return []queue.Option{queue.WithLockPath("/jobs-locks/" + path.Base(shardPath))}
	}))
	if err := s.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer s.Close(ctx)
	if err := s.Put(ctx, []byte("resize")); err != nil {
		log.Fatal(err)
	}
	cctx, stop := context.WithCancel(ctx)
	err = s.Consume(cctx, func(ctx context.Context, it queue.Item) error {
		fmt.Println(string(it.Data), it.Fenced())
		stop()
		return nil
	})
	fmt.Println(errors.Is(err, context.Canceled), s.ShardCount())
	// Output:
	// resize true
	// true 1
}
