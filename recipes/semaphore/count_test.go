package semaphore_test

import (
	"errors"
	"testing"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/recipes/shared"
)

const maxPath = "/config/max-leases"

// The maximum comes from a SharedCount: raising it from 1 to 3 lets the
// two waiters in; lowering it to 1 admits nobody new until the leases held
// are back below it; 0 admits nobody.
func TestMaxLeasesFromSharedCount(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			ns := testkit.Unique(t)
			ctx := testkit.Ctx(t)
			admin := shared.NewCount(testkit.Connect(t, zkAddr, ns), maxPath, 1)
			checker := testkit.Connect(t, zkAddr, ns)
			// Every semaphore is another process: its own client and count.
			newSem := func() *semaphore.Semaphore {
				c := testkit.Connect(t, zkAddr, ns)
				n := shared.NewCount(c, maxPath, 1)
				t.Cleanup(func() { _ = n.Close() })
				return semaphore.New(c, semPath, 0, m.with(semaphore.WithMaxLeasesFrom(n))...)
			}
			probe := func(what string) {
				t.Helper()
				if l, ok, err := newSem().TryAcquire(ctx); ok || err != nil {
					t.Fatalf("%s: TryAcquire = %v, %v, %v; want busy (nil, false, nil)", what, l, ok, err)
				}
			}

			a, err := newSem().Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			b, c := acquireAsync(ctx, newSem()), acquireAsync(ctx, newSem())
			if m.v2 {
				// One waits behind the gate, the other for the gate.
				waitCount(t, checker, semPath+"/leases", 2)
				waitCount(t, checker, semPath+"/locks", 2)
			} else {
				waitCount(t, checker, semPath, 3)
			}
			pending(t, b, "b with max 1")
			pending(t, c, "c with max 1")

			if err := admin.Set(ctx, 3); err != nil {
				t.Fatal(err)
			}
			rb, rc := await(t, b), await(t, c)
			if rb.err != nil || rc.err != nil {
				t.Fatalf("after raising the max to 3: %v, %v", rb.err, rc.err)
			}

			// Three held, max lowered to 1: d waits until all three are back.
			if err := admin.Set(ctx, 1); err != nil {
				t.Fatal(err)
			}
			d := acquireAsync(ctx, newSem())
			waitCount(t, checker, m.leaseDir(semPath), 4)
			mustRelease(t, a)
			probe("2 held, max 1")
			pending(t, d, "d with 2 held, max 1")
			mustRelease(t, rb.lease)
			probe("1 held, max 1")
			pending(t, d, "d with 1 held, max 1")
			mustRelease(t, rc.lease)
			rd := await(t, d)
			if rd.err != nil {
				t.Fatal(rd.err)
			}

			// A max of 0 admits nobody; raising it lets the waiter in.
			if err := admin.Set(ctx, 0); err != nil {
				t.Fatal(err)
			}
			mustRelease(t, rd.lease)
			s := newSem()
			if got := s.MaxLeases(); got != 1 {
				// Not started yet: the count's seed.
				t.Fatalf("MaxLeases before the first acquire = %d", got)
			}
			e := acquireAsync(ctx, s)
			waitCount(t, checker, m.leaseDir(semPath), 1)
			probe("max 0")
			pending(t, e, "e with max 0")
			if got := s.MaxLeases(); got != 0 {
				t.Fatalf("MaxLeases = %d, want 0", got)
			}
			if err := admin.Set(ctx, 1); err != nil {
				t.Fatal(err)
			}
			re := await(t, e)
			if re.err != nil {
				t.Fatal(re.err)
			}
			mustRelease(t, re.lease)
			if err := admin.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A closed count fails acquires instead of freezing the maximum.
func TestClosedCountFailsAcquire(t *testing.T) {
	t.Parallel()
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	ctx := testkit.Ctx(t)
	n := shared.NewCount(c, maxPath, 2)
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	s := semaphore.New(c, semPath, 0, v1(semaphore.WithMaxLeasesFrom(n))...)
	if l, err := s.Acquire(ctx); l != nil || !errors.Is(err, shared.ErrClosed) {
		t.Fatalf("Acquire with a closed count = %v, %v; want shared.ErrClosed", l, err)
	}
}
