package multilock_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/multilock"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/recipes/semaphore"
)

// The examples connect to the servers in $GOCURATOR_ZK, as the gocurator
// CLI does: a connect string such as "127.0.0.1:2181" (the tests' TestMain
// sets it to the package's test server).

// Move money between two accounts while holding both accounts' locks and
// one of the ledger's three writer leases.
func ExampleMultiLock() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("bank"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	l := multilock.New(c,
		multilock.Mutex(mutex.New(c, "/accounts/bob")),
		multilock.Mutex(mutex.New(c, "/accounts/alice")),
		multilock.Lease(semaphore.New(c, "/ledger-writers", 3)),
	)
	actx, cancel := context.WithTimeout(ctx, 10*time.Second) // for all three
	defer cancel()
	if err := l.Acquire(actx); err != nil {
		log.Fatal(err)
	}
	for _, m := range l.Members() {
		fmt.Println("holding", m)
	}
	select {
	case <-l.Done():
		fmt.Println("lost:", l.Err())
	default:
		fmt.Println("transfer done")
	}
	if err := l.Release(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// holding mutex /accounts/alice
	// holding mutex /accounts/bob
	// holding lease of /ledger-writers
	// transfer done
}

// Curator's InterProcessMultiLock(client, paths): one mutex per path.
func ExampleNewMutexes() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("app"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	l := multilock.NewMutexes(c, []string{"/locks/orders", "/locks/invoices"})
	ok, err := l.TryAcquire(ctx)
	fmt.Println("both held:", ok, err)
	fmt.Println("release:", l.Release(ctx))
	// Output:
	// both held: true <nil>
	// release: <nil>
}
