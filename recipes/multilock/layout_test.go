package multilock_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/multilock"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/recipes/rwlock"
	"github.com/gocurator/curator/recipes/semaphore"
)

// A member whose path holds another recipe's layout refuses it: the
// multi-lock's acquire fails with ErrLayoutMismatch, and the members it
// took before are given back, leaving none of their nodes.
func TestMemberLayoutMismatch(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	c, other := testkit.Connect(t, zkAddr, ns), testkit.Connect(t, zkAddr, ns)
	w := rwlock.New(other, "/taken").WriteLock()
	if err := w.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	l := multilock.New(c,
		multilock.Mutex(mutex.New(c, "/a")),
		multilock.Lease(semaphore.New(c, "/s", 2)),
		multilock.Mutex(mutex.New(c, "/taken")), // a read/write lock's path
	)
	if err := l.Acquire(ctx); !errors.Is(err, multilock.ErrLayoutMismatch) {
		t.Fatalf("Acquire = %v, want ErrLayoutMismatch", err)
	}
	if ok, err := l.TryAcquire(ctx); ok || !errors.Is(err, multilock.ErrLayoutMismatch) {
		t.Fatalf("TryAcquire = %v, %v; want ErrLayoutMismatch", ok, err)
	}
	if l.IsHeld() {
		t.Fatal("held after a refused acquire")
	}
	for _, p := range []string{"/a", "/s/leases", "/taken"} {
		for _, n := range testkit.Children(t, c, p) {
			if strings.Contains(n, "lock-") || strings.Contains(n, "lease-") {
				t.Fatalf("refused multi-lock left %s/%s", p, n)
			}
		}
	}
	if err := w.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.Acquire(ctx); err != nil {
		t.Fatalf("Acquire once the path is free of the other layout: %v", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
