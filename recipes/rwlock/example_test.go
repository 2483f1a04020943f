package rwlock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/rwlock"
)

// The examples connect to the servers in $GOCURATOR_ZK, as the gocurator
// CLI does: a connect string such as "127.0.0.1:2181" (the tests' TestMain
// sets it to the package's test server).

// Readers share the lock; a writer has it alone.
func ExampleNew() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-new"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	config := rwlock.New(c, "/locks/config")
	read := config.ReadLock()
	if err := read.Acquire(ctx); err != nil { // waits for writers queued ahead
		log.Fatal(err)
	}
	defer read.Release(context.Background())
	work := make(chan string, 1)
	go func() { work <- "configuration read" }()
	select {
	case <-read.Done(): // the hold ended with the connection
		fmt.Println("lost:", read.Err())
	case r := <-work:
		fmt.Println(r)
	}
	// Output: configuration read
}

// A writer with a timeout, fencing its write with the lock node.
func ExampleRWLock_WriteLock() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-write"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Create(ctx, "/config", []byte("v1")); err != nil {
		log.Fatal(err)
	}
	defer c.Delete(context.Background(), "/config")

	write := rwlock.New(c, "/locks/config").WriteLock()
	tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := write.Acquire(tctx); errors.Is(err, context.DeadlineExceeded) {
		fmt.Println("still locked by others; no node left behind")
		return
	} else if err != nil {
		log.Fatal(err)
	}
	defer write.Release(context.Background())
	// Applied only while our write node exists.
	if _, err := write.FencedMulti(ctx, framework.SetOp("/config", []byte("v2"), -1)); err != nil {
		log.Fatal("write refused: ", err)
	}
	data, _, err := c.Get(ctx, "/config")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(data))
	// Output: v2
}

// Downgrade: the write lock's holder takes the read lock at once and then
// releases the write lock; a queued writer still waits for the read hold.
// The reverse, an upgrade, is refused.
func ExampleRWLock_ReadLock() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-downgrade"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	rw := rwlock.New(c, "/locks/config")
	if err := rw.WriteLock().Acquire(ctx); err != nil {
		log.Fatal(err)
	}
	if err := rw.ReadLock().Acquire(ctx); err != nil { // granted at once
		log.Fatal(err)
	}
	if err := rw.WriteLock().Release(ctx); err != nil {
		log.Fatal(err)
	}
	// Only the read lock is held now.
	err = rw.WriteLock().Acquire(ctx)
	fmt.Println("upgrade refused:", errors.Is(err, rwlock.ErrUpgradeNotSupported))
	if err := rw.ReadLock().Release(ctx); err != nil {
		log.Fatal(err)
	}
	// Output: upgrade refused: true
}

// Non-blocking attempts: TryAcquire never waits for another holder.
func ExampleLock_TryAcquire() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("example-try"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	reader := rwlock.New(c, "/locks/report").ReadLock() // another owner, reading
	if err := reader.Acquire(ctx); err != nil {
		log.Fatal(err)
	}
	defer reader.Release(context.Background())

	write := rwlock.New(c, "/locks/report").WriteLock()
	ok, err := write.TryAcquire(ctx)
	switch {
	case err != nil:
		log.Fatal(err)
	case !ok:
		fmt.Println("busy; try later") // and no node of ours is left
	default:
		defer write.Release(context.Background())
		fmt.Println("writing the report")
	}
	// Output: busy; try later
}

// Bad input is reported by every call, as errors matched with errors.Is;
// New itself does no I/O.
func ExampleNew_badInput() {
	ctx := context.Background()
	err := rwlock.New(nil, "/locks/config").ReadLock().Acquire(ctx)
	fmt.Println(errors.Is(err, rwlock.ErrNilClient))
	err = rwlock.New(nil, "/locks/config").WriteLock().Release(ctx)
	fmt.Println(errors.Is(err, rwlock.ErrNotHeld))
	// Output:
	// true
	// true
}
