package mutex_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/mutex"
)

func ExampleNew() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, "127.0.0.1:2181", framework.WithNamespace("app"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	m := mutex.New(c, "/locks/orders")
	if err := m.Acquire(ctx); err != nil {
		log.Fatal(err)
	}
	defer m.Release(context.Background())
	fmt.Println("holding with fencing token", m.FencingToken())
}

// A lost hold looks like a context: select on Done.
func ExampleMutex_Done() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, "127.0.0.1:2181")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	m := mutex.New(c, "/locks/orders")
	if err := m.Acquire(ctx); err != nil {
		log.Fatal(err)
	}
	defer m.Release(context.Background())
	work := time.After(time.Second)
	select {
	case <-m.Done():
		log.Println("stopped:", m.Err()) // ErrLockLost: stop writing
	case <-work:
		fmt.Println("done while holding")
	}
}

// A timeout is a context deadline; a failed acquire leaves no node.
func ExampleMutex_Acquire_timeout() {
	c, err := framework.Connect(context.Background(), "127.0.0.1:2181")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	m := mutex.New(c, "/locks/orders")
	if err := m.Acquire(ctx); err != nil {
		fmt.Println("not acquired:", err)
		return
	}
	defer m.Release(context.Background())
}

func ExampleMutex_TryAcquire() {
	c, err := framework.Connect(context.Background(), "127.0.0.1:2181")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	m := mutex.New(c, "/locks/cron")
	ok, err := m.TryAcquire(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	if !ok {
		fmt.Println("another instance runs the job")
		return
	}
	defer m.Release(context.Background())
}

// FencedMulti makes ZooKeeper itself reject the write once the lock is gone.
func ExampleMutex_FencedMulti() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, "127.0.0.1:2181")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	m := mutex.New(c, "/locks/config")
	if err := m.Acquire(ctx); err != nil {
		log.Fatal(err)
	}
	defer m.Release(context.Background())
	if _, err := m.FencedMulti(ctx, framework.SetOp("/config/current", []byte("v2"), -1)); err != nil {
		log.Println("write refused:", err)
	}
}

func ExampleRevocable() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, "127.0.0.1:2181")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	m := mutex.New(c, "/locks/report", mutex.Revocable(func(m *mutex.Mutex) {
		_ = m.Release(context.Background()) // asked to give up the lock
	}))
	if err := m.Acquire(ctx); err != nil {
		log.Fatal(err)
	}
	// Elsewhere: mutex.Revoke(ctx, client, nodeFromParticipants)
}

// Many goroutines of one process on one lock: with local hand-over they
// share one node and pass the hold among themselves with no request, at
// most 16 times in a row before the other processes get their turn.
func ExampleWithLocalHandover() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, "127.0.0.1:2181")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
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
		}()
	}
	for range 16 {
		<-done
	}
}

// Per-holder tokens: every local holder gets a token of its own, at one
// round trip per local hand-over.
func ExampleWithPerHolderTokens() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, "127.0.0.1:2181")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	m := mutex.New(c, "/locks/ledger", mutex.WithLocalHandover(8), mutex.WithPerHolderTokens())
	if err := m.Acquire(ctx); err != nil {
		log.Fatal(err)
	}
	defer m.Release(context.Background())
	fmt.Println("token of this holder alone:", m.FencingToken(), "local waiters:", m.LocalWaiters())
}
