package mutex_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/recipes/rwlock"
	"github.com/gocurator/curator/recipes/semaphore"
)

// onlyChild fails unless path's only child is name: a refused acquire left
// nothing of its own.
func onlyChild(t *testing.T, c *framework.Client, path, name, what string) {
	t.Helper()
	if got := testkit.Children(t, c, path); len(got) != 1 || got[0] != name {
		t.Fatalf("%s: children of %s are %v, want only %s", what, path, got, name)
	}
}

// A mutex and a read/write lock on one path each ignored the other's
// nodes (Curator's drivers sort only their own names), so a mutex holder
// and a write lock holder were both admitted. Each now refuses the other's
// layout, both ways, with ErrLayoutMismatch, and leaves no node.
func TestMutexAndReadWriteLockRefuseEachOther(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	c1, c2 := testkit.Connect(t, zkAddr, ns), testkit.Connect(t, zkAddr, ns)

	t.Run("mutex on a read/write lock's path", func(t *testing.T) {
		for _, side := range []string{"write", "read"} {
			path := "/rw-" + side
			rw := rwlock.New(c1, path)
			k := rw.WriteLock()
			if side == "read" {
				k = rw.ReadLock()
			}
			if err := k.Acquire(ctx); err != nil {
				t.Fatal(err)
			}
			_, held := framework.SplitPath(k.Node())
			m := mutex.New(c2, path)
			if err := m.Acquire(ctx); !errors.Is(err, mutex.ErrLayoutMismatch) {
				t.Fatalf("mutex Acquire beside a %s lock: %v, want ErrLayoutMismatch", side, err)
			}
			if ok, err := m.TryAcquire(ctx); ok || !errors.Is(err, mutex.ErrLayoutMismatch) {
				t.Fatalf("mutex TryAcquire beside a %s lock: %v, %v; want ErrLayoutMismatch", side, ok, err)
			}
			onlyChild(t, c1, path, held, "refused mutex")
			if err := k.Release(ctx); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("read/write lock on a mutex's path", func(t *testing.T) {
		const path = "/mutex"
		m := mutex.New(c1, path)
		if err := m.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
		_, held := framework.SplitPath(m.Node())
		rw := rwlock.New(c2, path)
		for name, k := range map[string]*rwlock.Lock{"write": rw.WriteLock(), "read": rw.ReadLock()} {
			if err := k.Acquire(ctx); !errors.Is(err, rwlock.ErrLayoutMismatch) {
				t.Fatalf("%s Acquire beside a mutex: %v, want ErrLayoutMismatch", name, err)
			}
			if ok, err := k.TryAcquire(ctx); ok || !errors.Is(err, rwlock.ErrLayoutMismatch) {
				t.Fatalf("%s TryAcquire beside a mutex: %v, %v; want ErrLayoutMismatch", name, ok, err)
			}
			onlyChild(t, c1, path, held, "refused "+name+" lock")
		}
		if err := m.Release(ctx); err != nil {
			t.Fatal(err)
		}
		// With the mutex gone the path is the read/write lock's.
		if err := rw.WriteLock().Acquire(ctx); err != nil {
			t.Fatal(err)
		}
		if err := rw.WriteLock().Release(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// A mutex on a path whose leases/ holds a semaphore's lease (Curator's
// InterProcessSemaphoreMutex, or a V2 semaphore) refuses; the V2 side
// refuses a mutex's nodes (semaphore's own tests). An empty leases/
// container is no lease.
func TestMutexRefusesSemaphoreLeases(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	c1, c2 := testkit.Connect(t, zkAddr, ns), testkit.Connect(t, zkAddr, ns)
	const path = "/shared"
	sm := semaphore.NewMutex(c1, path)
	if err := sm.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	m := mutex.New(c2, path)
	if err := m.Acquire(ctx); !errors.Is(err, mutex.ErrLayoutMismatch) || !strings.Contains(err.Error(), "leases/") {
		t.Fatalf("mutex beside a semaphore mutex's lease: %v, want ErrLayoutMismatch naming the lease", err)
	}
	for _, n := range testkit.Children(t, c1, path) {
		if strings.Contains(n, "lock-") {
			t.Fatalf("refused mutex left %s", n)
		}
	}
	if err := sm.Release(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "leases/ empty", func() bool { return len(testkit.Children(t, c1, path+"/leases")) == 0 })
	if ok, err := m.TryAcquire(ctx); !ok || err != nil {
		t.Fatalf("mutex once the lease is back: %v, %v", ok, err)
	}
	if err := m.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// A mutex and a write lock racing on fresh paths: both may be refused,
// never both admitted (the one created second sees the first).
func TestMutexAndWriteLockRaceNeverBothAdmitted(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	c1, c2 := testkit.Connect(t, zkAddr, ns), testkit.Connect(t, zkAddr, ns)
	const rounds = 30
	admitted := 0
	for i := range rounds {
		path := fmt.Sprintf("/race-%d", i)
		m, w := mutex.New(c1, path), rwlock.New(c2, path).WriteLock()
		var (
			wg       sync.WaitGroup
			mok, wok bool
			merr     error
			werr     error
		)
		wg.Add(2)
		go func() { defer wg.Done(); mok, merr = m.TryAcquire(ctx) }()
		go func() { defer wg.Done(); wok, werr = w.TryAcquire(ctx) }()
		wg.Wait()
		for _, err := range []error{merr, werr} {
			if err != nil && !errors.Is(err, framework.ErrLayoutMismatch) {
				t.Fatalf("round %d: %v", i, err)
			}
		}
		if mok && wok {
			t.Fatalf("round %d: a mutex and a write lock both admitted on one path", i)
		}
		if mok {
			admitted++
			if err := m.Release(context.WithoutCancel(ctx)); err != nil {
				t.Fatal(err)
			}
		}
		if wok {
			admitted++
			if err := w.Release(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("%d of %d rounds admitted one of the two", admitted, rounds)
}

// Curator's own recipes on the path are recognised by their names: a Go
// mutex refuses a path where Curator's InterProcessReadWriteLock holds,
// and a Go read/write lock a path where Curator's InterProcessMutex holds.
// (Curator's recipes cannot refuse ours: on a path shared with Java
// processes, use the recipe they use.)
func TestInteropRefusesCuratorsOtherLock(t *testing.T) {
	t.Parallel()
	java := curatorjava.StartDriver(t, zkAddr)
	c := testkit.Connect(t, zkAddr, "") // no namespace: Java sees full paths
	ctx := testkit.Ctx(t)
	base := "/interop/" + testkit.Unique(t)
	rwPath, mPath := base+"/rw", base+"/mutex"
	java.MustDo("rwlock rw " + rwPath)
	java.MustDo("mutex m " + mPath)
	for _, id := range []string{"rw.write", "m"} {
		if got := java.MustDo("acquire " + id + " 10000"); got != "true" {
			t.Fatalf("java acquire %s: %s", id, got)
		}
	}
	if ok, err := mutex.New(c, rwPath).TryAcquire(ctx); ok || !errors.Is(err, mutex.ErrLayoutMismatch) {
		t.Fatalf("Go mutex beside Curator's write lock: %v, %v; want ErrLayoutMismatch", ok, err)
	}
	if ok, err := rwlock.New(c, mPath).WriteLock().TryAcquire(ctx); ok || !errors.Is(err, rwlock.ErrLayoutMismatch) {
		t.Fatalf("Go write lock beside Curator's mutex: %v, %v; want ErrLayoutMismatch", ok, err)
	}
	for _, p := range []string{rwPath, mPath} {
		if got := testkit.Children(t, c, p); len(got) != 1 {
			t.Fatalf("refused acquires left nodes at %s: %v", p, got)
		}
	}
	java.MustDo("release rw.write")
	java.MustDo("release m")
}
