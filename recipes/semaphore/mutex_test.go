package semaphore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/recipes/shared"
)

const mutexPath = "/locks/report"

func TestMutex(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	c1, c2 := testkit.Connect(t, zkAddr, ns), testkit.Connect(t, zkAddr, ns)
	m1, m2 := semaphore.NewMutex(c1, mutexPath), semaphore.NewMutex(c2, mutexPath)
	if !errors.Is(m1.Err(), semaphore.ErrNotHeld) || m1.IsHeld() {
		t.Fatalf("fresh mutex: Err %v", m1.Err())
	}
	testkit.WaitClosed(t, m1.Done(), "Done of a mutex never held")
	if err := m1.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if !m1.IsHeld() || m1.Err() != nil {
		t.Fatalf("after Acquire: held %v, Err %v", m1.IsHeld(), m1.Err())
	}
	if parent, name := framework.SplitPath(m1.Node()); parent != mutexPath+"/leases" ||
		!strings.HasPrefix(framework.StripProtected(name), "lease-") {
		t.Fatalf("node %s, want %s/leases/_c_<uuid>-lease-<seq> (InterProcessSemaphoreMutex)", m1.Node(), mutexPath)
	}
	if ok, err := m2.TryAcquire(ctx); ok || err != nil {
		t.Fatalf("other handle TryAcquire = %v, %v; want false", ok, err)
	}
	// Not reentrant: the holder's own TryAcquire fails, its Acquire waits
	// for a Release, from any goroutine.
	if ok, err := m1.TryAcquire(ctx); ok || err != nil {
		t.Fatalf("holder's TryAcquire = %v, %v; want false", ok, err)
	}
	again := make(chan error, 1)
	go func() { again <- m1.Acquire(ctx) }()
	done := m1.Done()
	if err := m1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.WaitClosed(t, done, "Done after Release")
	if err := <-again; err != nil {
		t.Fatalf("second Acquire after the Release: %v", err)
	}
	if ps, err := m1.Participants(ctx); err != nil || len(ps) != 1 || ps[0] != m1.Node() {
		t.Fatalf("participants %v, %v", ps, err)
	}
	// Bounded wait on another client: its deadline passes, nothing is left.
	dctx, cancel := context.WithTimeout(ctx, shortWait)
	defer cancel()
	if err := m2.Acquire(dctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire while held elsewhere = %v, want DeadlineExceeded", err)
	}
	if err := m1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m1.Release(ctx); !errors.Is(err, semaphore.ErrNotHeld) {
		t.Fatalf("extra Release = %v, want ErrNotHeld", err)
	}
	if ok, err := m2.TryAcquire(ctx); !ok || err != nil {
		t.Fatalf("TryAcquire once free = %v, %v", ok, err)
	}
	if err := m2.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if got := testkit.Children(t, c1, mutexPath+"/leases"); len(got) != 0 {
		t.Fatalf("nodes left: %v", got)
	}
	if err := semaphore.NewMutex(nil, mutexPath).Acquire(ctx); !errors.Is(err, semaphore.ErrNilClient) {
		t.Fatalf("nil client: %v", err)
	}
	if ok, err := semaphore.NewMutex(c1, "bad").TryAcquire(ctx); ok || !errors.Is(err, semaphore.ErrInvalidPath) {
		t.Fatalf("bad path: %v, %v", ok, err)
	}
	// A count would be ignored (the maximum is 1): refused, not dropped.
	count := shared.NewCount(c1, "/counts/mutex", 3)
	if err := semaphore.NewMutex(c1, mutexPath, semaphore.WithMaxLeasesFrom(count)).Acquire(ctx); !errors.Is(err, framework.ErrInvalidOption) {
		t.Fatalf("WithMaxLeasesFrom on a semaphore mutex: %v, want ErrInvalidOption", err)
	}
}
