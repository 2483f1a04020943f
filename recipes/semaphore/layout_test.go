package semaphore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/rwlock"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/recipes/shared"
)

// onlyNodes fails unless the children of path are exactly want, in any
// order.
func onlyNodes(t testing.TB, c *framework.Client, path string, want []string, what string) {
	t.Helper()
	got := slices.Sorted(slices.Values(testkit.Children(t, c, path)))
	want = slices.Sorted(slices.Values(want))
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: children of %s are %v, want %v", what, path, got, want)
	}
}

// A V2 acquire refused on a path that holds a V1 layout leaves nothing of
// its own there, not even the empty "locks" and "leases" containers it made
// on its way (which made V1 refuse the path until the server reaped them):
// V1 keeps working at once.
func TestRefusedV2LeavesNothing(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	c1, c2 := testkit.Connect(t, zkAddr, ns), testkit.Connect(t, zkAddr, ns)
	v1 := semaphore.New(c1, semPath, 5, v1()...)
	held, err := v1.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, node := framework.SplitPath(held.Node())
	v2 := semaphore.New(c2, semPath, 5, semaphore.CuratorV2())
	calls := []struct {
		name string
		call func() error
	}{
		{"Acquire", func() error { _, err := v2.Acquire(ctx); return err }},
		{"TryAcquire", func() error { _, _, err := v2.TryAcquire(ctx); return err }},
		{"AcquireN", func() error { _, err := v2.AcquireN(ctx, 2); return err }},
	}
	for _, tt := range calls {
		if err := tt.call(); !errors.Is(err, semaphore.ErrLayoutMismatch) {
			t.Fatalf("V2 %s on a V1 path = %v, want ErrLayoutMismatch", tt.name, err)
		}
		onlyNodes(t, c1, semPath, []string{"leases", node}, "after a refused V2 "+tt.name)
		waitCount(t, c1, semPath+"/leases", 1) // the V1 holder's trace
		l, ok, err := v1.TryAcquire(ctx)
		if !ok {
			t.Fatalf("V1 right after a refused V2 %s: %v, %v", tt.name, ok, err)
		}
		mustRelease(t, l)
	}
	mustRelease(t, held)
}

// errBusy stands for a try that found no free lease (which is no error).
var errBusy = errors.New("busy")

// A V2 acquire that fails on a fresh path leaves nothing V1 could trip
// over. Failing for want of a lease (TryAcquire, the maximum is 0), it
// removes the containers it made: the path is left empty. Failing because
// its ctx ended, its node deletes may go to the background (clean-up never
// outlives the caller's deadline) and the empty containers may stay for
// the server to reap; once its nodes are gone, V1 works at once beside
// them.
func TestFailedV2LeavesNoDirectories(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, ns)
	zero := shared.NewCount(c, maxPath, 0)
	t.Cleanup(func() { _ = zero.Close() })
	v2 := semaphore.New(c, semPath, 0, semaphore.CuratorV2(), semaphore.WithMaxLeasesFrom(zero))
	calls := []struct {
		name     string
		call     func() error
		want     error
		ctxEnded bool
	}{
		{"TryAcquire with max 0", func() error {
			if l, ok, err := v2.TryAcquire(ctx); ok || err != nil {
				return fmt.Errorf("TryAcquire = %v, %v, %v; want busy (nil, false, nil)", l, ok, err)
			}
			return errBusy
		}, errBusy, false},
		{"Acquire until its deadline", func() error {
			dctx, cancel := context.WithTimeout(ctx, shortWait)
			defer cancel()
			_, err := v2.Acquire(dctx)
			return err
		}, context.DeadlineExceeded, true},
		{"Acquire cancelled while waiting", func() error {
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			r := acquireAsync(cctx, v2)
			// Its lease node in leases/ says it waits; an acquire that
			// returned instead fails here with what it returned.
			waitChildren(t, c, semPath+"/leases", "the waiter's lease node", func(ch []string) bool {
				select {
				case res := <-r:
					t.Fatalf("acquire with max 0 returned instead of waiting: %v, %v (leases/ had %v)", res.lease, res.err, ch)
				default:
				}
				return len(ch) == 1
			})
			cancel()
			return await(t, r).err
		}, context.Canceled, true},
	}
	for _, tt := range calls {
		if err := tt.call(); !errors.Is(err, tt.want) {
			t.Fatalf("%s = %v, want %v", tt.name, err, tt.want)
		}
		if tt.ctxEnded {
			waitEmpty(t, c, semPath+"/leases")
			waitEmpty(t, c, semPath+"/locks")
		} else {
			onlyNodes(t, c, semPath, nil, "after a failed V2 "+tt.name)
		}
		l, ok, err := semaphore.New(c, semPath, 1, v1()...).TryAcquire(ctx)
		if !ok {
			t.Fatalf("V1 right after a failed V2 %s: %v, %v", tt.name, ok, err)
		}
		mustRelease(t, l)
	}
}

// Empty "locks" and "leases" containers are what Curator's V2 (and ours,
// once its leases are returned) leaves behind until the server reaps them:
// they hold no lease, so V1 works beside them. A node in leases/ is a lease
// to a V2 semaphore, and V1 refuses; a node in locks/ is a V2 acquirer at
// the gate, which will count our trace in leases/, so V1 may hold.
func TestV1BesideEmptyV2Directories(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, ns)
	v1 := semaphore.New(c, semPath, 1, v1()...)

	// Made by hand, never used: the server never reaps these.
	for _, dir := range []string{"locks", "leases"} {
		if _, err := c.Create(ctx, semPath+"/"+dir, []byte{}, framework.WithMode(framework.Container),
			framework.CreatingParentContainers()); err != nil {
			t.Fatal(err)
		}
	}
	l, err := v1.Acquire(ctx)
	if err != nil {
		t.Fatalf("V1 beside empty V2 containers: %v", err)
	}
	mustRelease(t, l)

	t.Run("node in locks", func(t *testing.T) {
		node, err := c.Create(ctx, semPath+"/locks/x-", []byte{}, framework.WithMode(framework.EphemeralSequential))
		if err != nil {
			t.Fatal(err)
		}
		l, ok, err := v1.TryAcquire(ctx)
		if !ok {
			t.Fatalf("V1 TryAcquire beside a gate node = %v, %v", ok, err)
		}
		mustRelease(t, l)
		if err := c.Delete(ctx, node); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("node in leases", func(t *testing.T) {
		node, err := c.Create(ctx, semPath+"/leases/x-", []byte{}, framework.WithMode(framework.EphemeralSequential))
		if err != nil {
			t.Fatal(err)
		}
		if l, _, err := v1.TryAcquire(ctx); !errors.Is(err, semaphore.ErrLayoutMismatch) {
			t.Fatalf("V1 TryAcquire with %s = %v, %v; want ErrLayoutMismatch", node, l, err)
		}
		if l, err := v1.Acquire(ctx); !errors.Is(err, semaphore.ErrLayoutMismatch) {
			t.Fatalf("V1 Acquire with %s = %v, %v; want ErrLayoutMismatch", node, l, err)
		}
		for _, n := range testkit.Children(t, c, semPath) {
			if strings.Contains(n, "lock-") {
				t.Fatalf("refused V1 left %s", n)
			}
		}
		_, name := framework.SplitPath(node)
		onlyNodes(t, c, semPath+"/leases", []string{name}, "after refused V1 acquires")
		if err := c.Delete(ctx, node); err != nil {
			t.Fatal(err)
		}
	})

	// Our V2, used and done with, leaves the same empty containers.
	v2 := semaphore.New(c, semPath, 1, semaphore.CuratorV2())
	l2, err := v2.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := v1.TryAcquire(ctx); !errors.Is(err, semaphore.ErrLayoutMismatch) {
		t.Fatalf("V1 beside a V2 lease = %v, want ErrLayoutMismatch", err)
	}
	mustRelease(t, l2)
	if l, _, err = v1.TryAcquire(ctx); l == nil {
		t.Fatalf("V1 once the V2 lease is back: %v", err)
	}
	if _, _, err := v2.TryAcquire(ctx); !errors.Is(err, semaphore.ErrLayoutMismatch) {
		t.Fatalf("V2 beside a V1 lease = %v, want ErrLayoutMismatch", err)
	}
	mustRelease(t, l)
}

// V1 and V2 acquirers racing on a fresh path, each with one lease: they
// may both be refused, but never both admitted, whichever creates its
// nodes first (V1 no longer refuses empty V2 containers, so this is what
// keeps the two from over-admitting).
func TestV1AndV2RaceNeverBothAdmitted(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	c1, c2 := testkit.Connect(t, zkAddr, ns), testkit.Connect(t, zkAddr, ns)
	const rounds = 30
	admitted := 0
	for i := range rounds {
		path := fmt.Sprintf("%s-%d", semPath, i)
		sems := []*semaphore.Semaphore{semaphore.New(c1, path, 1, v1()...), semaphore.New(c2, path, 1, semaphore.CuratorV2())}
		if i%2 == 1 {
			sems[0], sems[1] = sems[1], sems[0]
		}
		leases := make([]*semaphore.Lease, len(sems))
		errs := make([]error, len(sems))
		var wg sync.WaitGroup
		oks := make([]bool, len(sems))
		for j, s := range sems {
			wg.Add(1)
			go func() {
				defer wg.Done()
				leases[j], oks[j], errs[j] = s.TryAcquire(ctx)
			}()
		}
		wg.Wait()
		n := 0
		for j, err := range errs {
			switch {
			case err == nil && oks[j]:
				n++
			case err == nil: // busy: refused, as a mismatch is
			case !errors.Is(err, semaphore.ErrLayoutMismatch):
				t.Fatalf("round %d: %v", i, err)
			}
		}
		if n > 1 {
			t.Fatalf("round %d: V1 and V2 both admitted on one path", i)
		}
		admitted += n
		for _, l := range leases {
			if l != nil {
				mustRelease(t, l)
			}
		}
	}
	t.Logf("%d of %d rounds admitted one of the two", admitted, rounds)
}

// A read/write lock's nodes on the path are another recipe's layout: both
// modes refuse them (V1 in its loop, V2 in its look at the path), and a
// read/write lock refuses a V1 semaphore's nodes (a mutex's layout) and a
// V2 semaphore's leases. Nothing refused is left behind.
func TestSemaphoreAndReadWriteLockRefuseEachOther(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	c1, c2 := testkit.Connect(t, zkAddr, ns), testkit.Connect(t, zkAddr, ns)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			path := semPath + "-" + m.name
			w := rwlock.New(c1, path).WriteLock()
			if err := w.Acquire(ctx); err != nil {
				t.Fatal(err)
			}
			s := semaphore.New(c2, path, 2, m.opts...)
			if l, err := s.Acquire(ctx); !errors.Is(err, semaphore.ErrLayoutMismatch) {
				t.Fatalf("%s semaphore beside a write lock: %v, %v; want ErrLayoutMismatch", m.name, l, err)
			}
			_, held := framework.SplitPath(w.Node())
			waitChildren(t, c1, path, "only the write lock's node", func(ch []string) bool {
				return len(ch) == 1 && ch[0] == held
			})
			waitEmpty(t, c1, path+"/leases")
			if err := w.Release(ctx); err != nil {
				t.Fatal(err)
			}

			l, err := s.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			rw := rwlock.New(c1, path)
			for _, k := range []*rwlock.Lock{rw.WriteLock(), rw.ReadLock()} {
				if ok, err := k.TryAcquire(ctx); ok || !errors.Is(err, rwlock.ErrLayoutMismatch) {
					t.Fatalf("read/write lock beside a %s lease: %v, %v; want ErrLayoutMismatch", m.name, ok, err)
				}
			}
			for _, n := range testkit.Children(t, c1, path) {
				if strings.Contains(n, "__") {
					t.Fatalf("refused read/write lock left %s", n)
				}
			}
			mustRelease(t, l)
		})
	}
}

// A V1 participant's trace in leases/ lives exactly as long as its node:
// gone with a cancelled wait, a busy try and a release; gone after a hold
// ended by Suspended while the session lives on (the hold deletes both once
// the connection is back); and one trace only when the reply to its create
// is lost (the protected create finds it instead of making a second, which
// V2 semaphores would count as a lease for ever).
func TestV1TraceLivesWithItsNode(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	proxy := newProxy(t)
	cut := testkit.Connect(t, proxy.Addr(), ns, framework.WithSessionTimeout(4*time.Second))
	other := testkit.Connect(t, zkAddr, ns)
	traces := semPath + "/leases"
	v1Nodes := func() []string {
		var out []string
		for _, n := range testkit.Children(t, other, semPath) {
			if strings.Contains(n, "lock-") {
				out = append(out, n)
			}
		}
		return out
	}

	lost := proxy.LoseNextCreateReply() // the trace's create: it comes first
	held, err := semaphore.New(cut, semPath, 1, v1()...).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitClosed(t, lost, "the lost create reply")
	waitCount(t, other, traces, 1)

	s := semaphore.New(other, semPath, 1, v1()...)
	if l, ok, err := s.TryAcquire(ctx); ok || err != nil {
		t.Fatalf("TryAcquire while held = %v, %v, %v; want busy", l, ok, err)
	}
	waitCount(t, other, traces, 1)
	cctx, cancel := context.WithCancel(ctx)
	w := acquireAsync(cctx, s)
	waitCount(t, other, traces, 2)
	cancel()
	if r := await(t, w); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled Acquire = %v, %v", r.lease, r.err)
	}
	waitCount(t, other, traces, 1)

	session := cut.SessionID()
	proxy.Cut()
	testkit.WaitClosed(t, held.Done(), "Done of a lease whose connection is cut")
	proxy.Restore()
	waitEmpty(t, other, traces)
	testkit.Eventually(t, "the lost lease's node deleted", func() bool { return len(v1Nodes()) == 0 })
	if cut.SessionID() != session {
		t.Fatalf("session %x lost; this test wants it to survive the cut", session)
	}

	l, err := s.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waitCount(t, other, traces, 1)
	mustRelease(t, l)
	waitEmpty(t, other, traces)
}
