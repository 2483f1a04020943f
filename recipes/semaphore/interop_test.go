package semaphore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/semaphore"
)

// Curator's InterProcessSemaphoreV2 (two JVMs) and our V2 mode (three
// clients) on one path never hold more than max leases together: checked
// in-process and by a marker node per holder. Java uses full paths: no
// namespace here, a path unique to the test instead.
func TestInteropWithCuratorSemaphoreV2(t *testing.T) {
	t.Parallel()
	const (
		max        = 2
		rounds     = 40 // per worker
		goWorkers  = 3
		javaDriver = 2
	)
	base := "/interop/" + testkit.Unique(t)
	path, markers := base+"/sem", base+"/markers"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := testkit.Connect(t, zkAddr, "")
	javas := make([]*curatorjava.Driver, javaDriver)
	for i := range javas {
		javas[i] = curatorjava.StartDriver(t, zkAddr)
		javas[i].MustDo(fmt.Sprintf("semv2 s %s %d", path, max))
	}

	var (
		holders    atomic.Int32
		javaLeases atomic.Int32
		wg         sync.WaitGroup
	)
	errc := make(chan error, goWorkers+javaDriver)
	// hold runs while a lease is held, by whichever side.
	hold := func() error {
		if h := holders.Add(1); h > max {
			return fmt.Errorf("%d holders", h)
		}
		defer holders.Add(-1)
		marker, err := c.Create(ctx, markers+"/m-", []byte{},
			framework.WithMode(framework.EphemeralSequential), framework.CreatingParentContainers())
		if err != nil {
			return err
		}
		defer c.Delete(ctx, marker)
		ms, _, err := c.Children(ctx, markers)
		if err != nil {
			return err
		}
		if len(ms) > max {
			return fmt.Errorf("%d holders' markers on the server", len(ms))
		}
		return nil
	}
	for i := range goWorkers {
		s := semaphore.New(testkit.Connect(t, zkAddr, ""), path, max, semaphore.CuratorV2())
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				l, err := s.Acquire(ctx)
				if err != nil {
					errc <- fmt.Errorf("go %d: %w", i, err)
					return
				}
				err = hold()
				if rerr := l.Release(ctx); err == nil {
					err = rerr
				}
				if err != nil {
					errc <- fmt.Errorf("go %d: %w", i, err)
					return
				}
			}
		}()
	}
	for i, j := range javas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				node, err := j.Do("lease s 60000")
				if err == nil && (node == "none" || !strings.HasPrefix(node, path+"/leases/")) {
					err = fmt.Errorf("lease: %q", node)
				}
				if err != nil {
					errc <- fmt.Errorf("java %d: %w", i, err)
					return
				}
				javaLeases.Add(1)
				err = hold()
				if _, rerr := j.Do("return " + node); err == nil {
					err = rerr
				}
				if err != nil {
					errc <- fmt.Errorf("java %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if got := javaLeases.Load(); got != javaDriver*rounds {
		t.Fatalf("Java took %d leases, want %d", got, javaDriver*rounds)
	}
	waitEmpty(t, c, path+"/leases")
	waitEmpty(t, c, path+"/locks")

	// Curator sees our lease; our V1 mode refuses Curator's layout.
	l, err := semaphore.New(c, path, max, semaphore.CuratorV2()).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, name := framework.SplitPath(l.Node())
	if got := javas[0].MustDo("participants s"); got != name {
		t.Fatalf("Curator's participants %q, want our lease %q", got, name)
	}
	javaNode := javas[0].MustDo("lease s 5000")
	if javaNode == "none" {
		t.Fatal("Curator found no lease with one of two held")
	}
	if got := javas[1].MustDo("lease s 200"); got != "none" {
		t.Fatalf("Curator took a third lease with max 2: %s", got)
	}
	if _, _, err := semaphore.New(c, path, max, v1()...).TryAcquire(ctx); !errors.Is(err, semaphore.ErrLayoutMismatch) {
		t.Fatalf("V1 on Curator's V2 path: %v, want ErrLayoutMismatch", err)
	}
	javas[0].MustDo("return " + javaNode)
	mustRelease(t, l)
	// With every lease back, the directories Curator leaves behind are
	// empty: no V2 layout at work, so V1 may use the path at once.
	old, ok, err := semaphore.New(c, path, max, v1()...).TryAcquire(ctx)
	if !ok {
		t.Fatalf("V1 beside Curator's empty V2 directories: %v, %v", ok, err)
	}
	mustRelease(t, old)
}

// Curator's InterProcessSemaphoreMutex and our NewMutex exclude each other.
func TestInteropWithCuratorSemaphoreMutex(t *testing.T) {
	t.Parallel()
	path := "/interop/" + testkit.Unique(t) + "/mutex"
	ctx := testkit.Ctx(t)
	java := curatorjava.StartDriver(t, zkAddr)
	java.MustDo("semmutex m " + path)
	m := semaphore.NewMutex(testkit.Connect(t, zkAddr, ""), path)
	if err := m.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if got := java.MustDo("acquire m 200"); got != "false" {
		t.Fatalf("Curator acquired a mutex we hold: %s", got)
	}
	if err := m.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if got := java.MustDo("acquire m 5000"); got != "true" {
		t.Fatalf("Curator could not acquire the free mutex: %s", got)
	}
	if ok, err := m.TryAcquire(ctx); ok || err != nil {
		t.Fatalf("TryAcquire while Curator holds = %v, %v", ok, err)
	}
	java.MustDo("release m")
	if ok, err := m.TryAcquire(ctx); !ok || err != nil {
		t.Fatalf("TryAcquire once Curator released = %v, %v", ok, err)
	}
	if err := m.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
