package semaphore_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/recipes/shared"
)

// The examples connect to the servers in $GOCURATOR_ZK, as the gocurator
// CLI does: a connect string such as "127.0.0.1:2181" (the tests' TestMain
// sets it to the package's test server).

func ExampleNew() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("app"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	// At most 3 workers at once, across every process using the path.
	s := semaphore.New(c, "/semaphores/encoders", 3)
	lease, err := s.Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer lease.Release(context.Background())
	fmt.Println("holding a lease")
	// Output: holding a lease
}

// Paths shared with Java processes that use Curator's
// InterProcessSemaphoreV2 need the V2 layout.
func ExampleCuratorV2() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("app"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	s := semaphore.New(c, "/semaphores/shared-with-java", 2, semaphore.CuratorV2())
	lease, err := s.Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer lease.Release(context.Background())
	parent, _ := framework.SplitPath(lease.Node())
	fmt.Println("lease node in", parent)
	// Output: lease node in /semaphores/shared-with-java/leases
}

func ExampleSemaphore_TryAcquire() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("app"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	s := semaphore.New(c, "/semaphores/nightly", 1)
	first, ok, err := s.TryAcquire(ctx)
	if err != nil || !ok {
		log.Fatal(ok, err)
	}
	defer first.Release(context.Background())
	// TryAcquire never waits; busy is a false, not an error, and leaves
	// the semaphore unchanged.
	if _, ok, err := s.TryAcquire(ctx); err == nil && !ok {
		fmt.Println("busy: another run holds the lease")
	}
	// Output: busy: another run holds the lease
}

// AcquireN is all or nothing under one deadline.
func ExampleSemaphore_AcquireN() {
	c, err := framework.Connect(context.Background(), os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("app"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s := semaphore.New(c, "/semaphores/gpus", 4)
	leases, err := s.AcquireN(ctx, 3)
	if err != nil {
		log.Fatal(err) // none are held
	}
	fmt.Println("leases:", len(leases))
	for _, l := range leases {
		_ = l.Release(context.Background())
	}
	// Output: leases: 3
}

// A lost lease looks like a context: select on Done.
func ExampleLease_Done() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("app"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	lease, err := semaphore.New(c, "/semaphores/crawlers", 5).Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer lease.Release(context.Background())
	work := time.After(10 * time.Millisecond)
	select {
	case <-lease.Done():
		log.Println("stopped:", lease.Err()) // ErrLockLost: stop working
	case <-work:
		fmt.Println("work done while holding the lease")
	}
	// Output: work done while holding the lease
}

// The maximum can live in ZooKeeper and change at run time.
func ExampleWithMaxLeasesFrom() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("app"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	limit := shared.NewCount(c, "/config/max-importers", 2)
	defer limit.Close()
	if err := limit.Set(ctx, 2); err != nil {
		log.Fatal(err)
	}
	s := semaphore.New(c, "/semaphores/importers", 0, semaphore.WithMaxLeasesFrom(limit))
	lease, err := s.Acquire(ctx) // starts the count if needed
	if err != nil {
		log.Fatal(err)
	}
	defer lease.Release(context.Background())
	fmt.Println("max leases:", s.MaxLeases())
	// Output: max leases: 2
}

// NewMutex is Curator's InterProcessSemaphoreMutex: not reentrant, and
// released from any goroutine.
func ExampleNewMutex() {
	ctx := context.Background()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace("app"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	m := semaphore.NewMutex(c, "/locks/migration")
	if err := m.Acquire(ctx); err != nil {
		log.Fatal(err)
	}
	ok, _ := m.TryAcquire(ctx)
	fmt.Println("second acquire by the holder:", ok)
	done := make(chan error)
	go func() { done <- m.Release(context.Background()) }()
	fmt.Println("released by another goroutine:", <-done)
	// Output:
	// second acquire by the holder: false
	// released by another goroutine: <nil>
}
