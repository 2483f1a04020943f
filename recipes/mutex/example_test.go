package mutex_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"sync/atomic"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/mutex"
)

// The examples connect to the servers in $GOCURATOR_ZK, as the gocurator
// CLI does: a connect string such as "127.0.0.1:2181" (the tests' TestMain
// sets it to the package's test server).

func ExampleNew() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-new"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	m := mutex.New(c, "/locks/orders")
	if err := m.Acquire(ctx); err != nil {
		log.Fatal(err)
	}
	defer m.Release(context.Background())
	// ... work on the orders, sending m.FencingToken() along ...
	fmt.Println("holding:", m.IsHeld())
	// Output: holding: true
}

// A lost hold looks like a context: select on Done.
func ExampleMutex_Done() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-done"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	m := mutex.New(c, "/locks/orders")
	if err := m.Acquire(ctx); err != nil {
		log.Fatal(err)
	}
	defer m.Release(context.Background())
	work := make(chan string, 1)
	go func() { work <- "orders shipped" }()
	select {
	case <-m.Done():
		fmt.Println("stopped:", m.Err()) // ErrLockLost: stop writing
	case r := <-work:
		fmt.Println(r)
	}
	// Output: orders shipped
}

// A timeout is a context deadline; a failed acquire leaves no node.
func ExampleMutex_Acquire_timeout() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-timeout"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	holder := mutex.New(c, "/locks/orders") // another owner, holding
	if err := holder.Acquire(ctx); err != nil {
		log.Fatal(err)
	}
	defer holder.Release(context.Background())

	m := mutex.New(c, "/locks/orders")
	tctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	err = m.Acquire(tctx)
	fmt.Println("timed out:", errors.Is(err, context.DeadlineExceeded))
	nodes, err := m.Participants(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("nodes:", len(nodes)) // the holder's alone
	// Output:
	// timed out: true
	// nodes: 1
}

func ExampleMutex_TryAcquire() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-try"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	other := mutex.New(c, "/locks/cron") // another instance, running the job
	if err := other.Acquire(ctx); err != nil {
		log.Fatal(err)
	}
	defer other.Release(context.Background())

	m := mutex.New(c, "/locks/cron")
	ok, err := m.TryAcquire(ctx) // never waits for a holder
	if err != nil {
		log.Fatal(err)
	}
	if !ok {
		fmt.Println("another instance runs the job")
		return
	}
	defer m.Release(context.Background())
	// Output: another instance runs the job
}

// FencedMulti makes ZooKeeper itself reject the write once the lock is gone.
func ExampleMutex_FencedMulti() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-fenced"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Create(ctx, "/config", []byte("v1")); err != nil {
		log.Fatal(err)
	}
	defer c.Delete(context.Background(), "/config")

	m := mutex.New(c, "/locks/config")
	if err := m.Acquire(ctx); err != nil {
		log.Fatal(err)
	}
	defer m.Release(context.Background())
	// Applied only while m's lock node exists.
	if _, err := m.FencedMulti(ctx, framework.SetOp("/config", []byte("v2"), -1)); err != nil {
		log.Fatal("write refused: ", err)
	}
	data, _, err := c.Get(ctx, "/config")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(data))
	// Output: v2
}

func ExampleRevocable() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-revocable"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	released := make(chan struct{})
	m := mutex.New(c, "/locks/report", mutex.Revocable(func(m *mutex.Mutex) {
		_ = m.Release(context.Background()) // asked to give up the lock
		close(released)
	}))
	if err := m.Acquire(ctx); err != nil {
		log.Fatal(err)
	}
	// Elsewhere: ask the holder, the first participant, to let go.
	nodes, err := m.Participants(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if err := mutex.Revoke(ctx, c, nodes[0]); err != nil {
		log.Fatal(err)
	}
	<-released
	fmt.Println("held after the revocation:", m.IsHeld())
	// Output: held after the revocation: false
}

// Many goroutines of one process on one lock: with local hand-over they
// share one node and pass the hold among themselves with no request, at
// most 16 times in a row before the other processes get their turn.
func ExampleWithLocalHandover() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-handover"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	var holds atomic.Int32
	done := make(chan struct{})
	for range 16 {
		go func() {
			defer func() { done <- struct{}{} }()
			// One handle per goroutine; the handles of c on the path share a node.
			m := mutex.New(c, "/locks/account-42", mutex.WithLocalHandover(16),
				mutex.WithTelemetryName("accounts"))
			if err := m.Acquire(ctx); err != nil {
				log.Print(err)
				return
			}
			defer m.Release(context.Background())
			// ... update the account, sending m.FencingToken() along ...
			holds.Add(1)
		}()
	}
	for range 16 {
		<-done
	}
	fmt.Println("holds:", holds.Load())
	// Output: holds: 16
}

// Per-holder tokens: every local holder gets a token of its own, greater
// than the one before, at one round trip per local hand-over.
func ExampleWithPerHolderTokens() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-tokens"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	opts := []mutex.Option{mutex.WithLocalHandover(8), mutex.WithPerHolderTokens()}
	first, next := mutex.New(c, "/locks/ledger", opts...), mutex.New(c, "/locks/ledger", opts...)
	if err := first.Acquire(ctx); err != nil {
		log.Fatal(err)
	}
	tokens := make(chan int64)
	go func() {
		if err := next.Acquire(ctx); err != nil { // waits for first
			log.Fatal(err)
		}
		token := next.FencingToken()
		if err := next.Release(context.Background()); err != nil {
			log.Fatal(err)
		}
		tokens <- token
	}()
	token := first.FencingToken()
	if err := first.Release(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("the next holder's token is greater:", <-tokens > token)
	// Output: the next holder's token is greater: true
}
