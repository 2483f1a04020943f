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

// javaV2 starts n Java drivers with an InterProcessSemaphoreV2 "s" of max
// leases at path.
func javaV2(t *testing.T, n int, path string, max int) []*curatorjava.Driver {
	t.Helper()
	js := make([]*curatorjava.Driver, n)
	for i := range js {
		js[i] = curatorjava.StartDriver(t, zkAddr)
		js[i].MustDo(fmt.Sprintf("semv2 s %s %d", path, max))
	}
	return js
}

// Issue 33 item 2, the way round a one-time check cannot see: our V1
// semaphore holds first, Curator's V2 comes later. Curator counts only the
// children of leases/, so our V1 participants must be there for it to
// count: with max 2 and one V1 lease held, Curator gets one lease, not two.
func TestCuratorV2CountsOurV1Holder(t *testing.T) {
	t.Parallel()
	const max = 2
	path := "/interop/" + testkit.Unique(t) + "/sem"
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, "")
	v1, err := semaphore.New(c, path, max, semaphore.CuratorV1()).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	js := javaV2(t, 2, path, max)
	first := js[0].MustDo("lease s 10000")
	if first == "none" {
		t.Fatal("Curator found no lease free with one of two held")
	}
	if got := js[1].MustDo("lease s 300"); got != "none" {
		t.Fatalf("Curator took a lease beside our V1 holder and its own: 3 holders of max %d (%s)", max, got)
	}
	// A V1 acquire now finds Curator's lease and refuses.
	if _, _, err := semaphore.New(c, path, max, semaphore.CuratorV1()).TryAcquire(ctx); !errors.Is(err, semaphore.ErrLayoutMismatch) {
		t.Fatalf("V1 beside Curator's lease: %v, want ErrLayoutMismatch", err)
	}
	mustRelease(t, v1)
	// Our participant's trace in leases/ went with the lease: Curator's
	// waiter gets the second lease now.
	second := js[1].MustDo("lease s 10000")
	if second == "none" {
		t.Fatal("Curator found no lease free once our V1 lease was returned")
	}
	js[0].MustDo("return " + first)
	js[1].MustDo("return " + second)
	waitEmpty(t, c, path+"/leases")
	waitEmpty(t, c, path+"/locks")
	waitChildren(t, c, path, path+" has no V1 node", func(ch []string) bool {
		for _, n := range ch {
			if strings.Contains(n, "lock-") {
				return false
			}
		}
		return true
	})
}

// A port that forgets CuratorV2() shares the path with Curator's
// InterProcessSemaphoreV2 correctly: the default layout is V2.
func TestDefaultLayoutSharesPathWithCuratorV2(t *testing.T) {
	t.Parallel()
	const max = 2
	path := "/interop/" + testkit.Unique(t) + "/sem"
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, "")
	js := javaV2(t, 2, path, max)
	javaNode := js[0].MustDo("lease s 10000")
	if javaNode == "none" {
		t.Fatal("Curator found no lease on a free semaphore")
	}
	s := semaphore.New(c, path, max)
	l, ok, err := s.TryAcquire(ctx)
	if err != nil || !ok {
		t.Fatalf("default semaphore beside one Curator lease of %d: %v, %v", max, ok, err)
	}
	if !strings.HasPrefix(l.Node(), path+"/leases/") {
		t.Fatalf("default layout's lease %q is not under %s/leases/", l.Node(), path)
	}
	if got := js[1].MustDo("lease s 300"); got != "none" {
		t.Fatalf("Curator took a third lease of %d: %s", max, got)
	}
	if l2, ok, err := s.TryAcquire(ctx); ok || err != nil {
		t.Fatalf("default semaphore took a third lease of %d: %v, %v, %v", max, l2, ok, err)
	}
	mustRelease(t, l)
	js[0].MustDo("return " + javaNode)
	waitEmpty(t, c, path+"/leases")
}

// Curator's InterProcessSemaphoreV2, our default layout and our V1 layout
// contend on one path of max 2, all at once: never more than 2 holders,
// checked in-process and by a marker node per holder held across each
// hold. Our acquires may be refused (ErrLayoutMismatch) while the other
// layout of ours is at work; Curator's never are (it cannot refuse), and
// all of its rounds complete.
func TestMixedLayoutsNeverOverAdmit(t *testing.T) {
	t.Parallel()
	const (
		max    = 2
		rounds = 25
	)
	base := "/interop/" + testkit.Unique(t)
	path, markers := base+"/sem", base+"/markers"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := testkit.Connect(t, zkAddr, "")
	js := javaV2(t, 2, path, max)
	var (
		holders, worst   atomic.Int32
		refused, goHolds atomic.Int32
		wg               sync.WaitGroup
	)
	errc := make(chan error, 8)
	hold := func() error {
		h := holders.Add(1)
		defer holders.Add(-1)
		for w := worst.Load(); h > w && !worst.CompareAndSwap(w, h); w = worst.Load() {
		}
		marker, err := c.Create(ctx, markers+"/m-", nil,
			framework.WithMode(framework.EphemeralSequential), framework.CreatingParentContainers())
		if err != nil {
			return err
		}
		defer c.Delete(ctx, marker)
		ms, _, err := c.Children(ctx, markers)
		if err != nil {
			return err
		}
		if len(ms) > max || h > max {
			return fmt.Errorf("%d holders (%d markers on the server) of max %d", h, len(ms), max)
		}
		return nil
	}
	goWorker := func(name string, s *semaphore.Semaphore, done *atomic.Bool) {
		defer wg.Done()
		for i := 0; i < rounds; i++ {
			if done != nil && done.Load() {
				return
			}
			l, err := s.Acquire(ctx)
			if errors.Is(err, semaphore.ErrLayoutMismatch) {
				refused.Add(1)
				continue
			}
			if err != nil {
				errc <- fmt.Errorf("%s: %w", name, err)
				return
			}
			goHolds.Add(1)
			err = hold()
			if rerr := l.Release(ctx); err == nil {
				err = rerr
			}
			if err != nil {
				errc <- fmt.Errorf("%s: %w", name, err)
				return
			}
		}
	}
	var othersDone atomic.Bool
	var others sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		others.Add(1)
		s := semaphore.New(testkit.Connect(t, zkAddr, ""), path, max)
		go func() { defer others.Done(); goWorker(fmt.Sprintf("go default %d", i), s, nil) }()
	}
	for i, j := range js {
		wg.Add(1)
		others.Add(1)
		go func() {
			defer wg.Done()
			defer others.Done()
			for range rounds {
				node, err := j.Do("lease s 60000")
				if err == nil && (node == "none" || !strings.HasPrefix(node, path+"/leases/")) {
					err = fmt.Errorf("lease: %q", node)
				}
				if err != nil {
					errc <- fmt.Errorf("java %d: %w", i, err)
					return
				}
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
	// The V1 worker runs until the others are done, refused or not.
	wg.Add(1)
	v1 := semaphore.New(testkit.Connect(t, zkAddr, ""), path, max, semaphore.CuratorV1())
	go goWorker("go V1", v1, &othersDone)
	others.Wait()
	othersDone.Store(true)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	t.Logf("at most %d holders; ours: %d holds, %d refusals", worst.Load(), goHolds.Load(), refused.Load())
	waitEmpty(t, c, path+"/leases")
	waitEmpty(t, c, path+"/locks")
}
