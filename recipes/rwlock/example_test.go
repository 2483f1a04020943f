package rwlock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/rwlock"
)

// Readers share the lock; a writer has it alone.
func ExampleNew() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, "127.0.0.1:2181")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	config := rwlock.New(c, "/locks/config")
	read := config.ReadLock()
	if err := read.Acquire(ctx); err != nil { // waits for writers queued ahead
		fmt.Println(err)
		return
	}
	defer read.Release(context.Background())
	select {
	case <-read.Done(): // the hold ended with the connection
		fmt.Println("lost:", read.Err())
	case <-time.After(time.Second): // read the configuration meanwhile
	}
}

// A writer with a timeout, fencing its write with the lock node.
func ExampleRWLock_WriteLock() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, "127.0.0.1:2181")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	write := rwlock.New(c, "/locks/config").WriteLock()
	tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := write.Acquire(tctx); errors.Is(err, context.DeadlineExceeded) {
		fmt.Println("still locked by others; no node left behind")
		return
	} else if err != nil {
		fmt.Println(err)
		return
	}
	defer write.Release(context.Background())
	// Applied only while our write node exists.
	if _, err := write.FencedMulti(ctx, framework.SetOp("/config", []byte("v2"), -1)); err != nil {
		fmt.Println(err)
	}
}

// Downgrade: the write lock's holder takes the read lock at once and then
// releases the write lock; a queued writer still waits for the read hold.
// The reverse, an upgrade, is refused.
func ExampleRWLock_ReadLock() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, "127.0.0.1:2181")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	rw := rwlock.New(c, "/locks/config")
	if err := rw.WriteLock().Acquire(ctx); err != nil {
		fmt.Println(err)
		return
	}
	if err := rw.ReadLock().Acquire(ctx); err != nil { // granted at once
		fmt.Println(err)
		return
	}
	if err := rw.WriteLock().Release(ctx); err != nil {
		fmt.Println(err)
	}
	// Only the read lock is held now.
	err = rw.WriteLock().Acquire(ctx)
	fmt.Println(errors.Is(err, rwlock.ErrUpgradeNotSupported))
	if err := rw.ReadLock().Release(ctx); err != nil {
		fmt.Println(err)
	}
}

// Non-blocking attempts: TryAcquire never waits for another holder.
func ExampleLock_TryAcquire() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, "127.0.0.1:2181")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	write := rwlock.New(c, "/locks/report").WriteLock()
	ok, err := write.TryAcquire(ctx)
	switch {
	case err != nil:
		fmt.Println(err)
	case !ok:
		fmt.Println("busy; try later")
	default:
		defer write.Release(ctx)
		fmt.Println("writing the report")
	}
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
