package semaphore_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/recipes/shared"
)

func TestLayout(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			c := testkit.Connect(t, zkAddr, testkit.Unique(t))
			ctx := testkit.Ctx(t)
			s := semaphore.New(c, semPath, 2, m.opts...)
			l, err := s.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			parent, name := framework.SplitPath(l.Node())
			base := "lock-"
			if m.v2 {
				base = "lease-"
			}
			if parent != m.leaseDir(semPath) || !framework.IsProtected(name) ||
				!strings.HasPrefix(framework.StripProtected(name), base) {
				t.Fatalf("lease node %q, want %s/_c_<uuid>-%s<seq>", l.Node(), m.leaseDir(semPath), base)
			}
			data, stat, err := c.Get(ctx, l.Node())
			if err != nil {
				t.Fatal(err)
			}
			if string(data) != string(c.DefaultData()) || stat.EphemeralOwner != c.SessionID() {
				t.Fatalf("data %q owner %x; want the default data %q, ephemeral of %x",
					data, stat.EphemeralOwner, c.DefaultData(), c.SessionID())
			}
			if l.FencingToken() != stat.Czxid {
				t.Fatalf("fencing token %d, czxid %d", l.FencingToken(), stat.Czxid)
			}
			ps, err := s.Participants(ctx)
			if err != nil || len(ps) != 1 || ps[0] != l.Node() {
				t.Fatalf("participants %v, %v; want [%s]", ps, err, l.Node())
			}
			if m.v2 {
				// The gate is released once the lease is held (Curator's
				// observed listing: locks/ empty).
				if got := testkit.Children(t, c, semPath+"/locks"); len(got) != 0 {
					t.Fatalf("gate nodes left while holding: %v", got)
				}
			}
			custom := semaphore.New(c, "/semaphores/custom", 1, m.with(semaphore.WithData([]byte("worker-7")))...)
			cl, err := custom.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if data, _, err := c.Get(ctx, cl.Node()); err != nil || string(data) != "worker-7" {
				t.Fatalf("WithData: lease node data %q, %v", data, err)
			}
			mustRelease(t, cl)
			mustRelease(t, l)
			if err := l.Release(ctx); !errors.Is(err, semaphore.ErrNotHeld) {
				t.Fatalf("second release = %v, want ErrNotHeld", err)
			}
			if !errors.Is(l.Err(), semaphore.ErrNotHeld) {
				t.Fatalf("Err after release = %v", l.Err())
			}
			testkit.WaitClosed(t, l.Done(), "Done after release")
			if got := leaseChildren(t, c, m, semPath); len(got) != 0 {
				t.Fatalf("nodes left after release: %v", got)
			}
			if !m.v2 {
				v1TracesGone(t, c, semPath)
			}
		})
	}
}

// Each mode refuses a path that holds the other's layout instead of
// counting leases its own way and admitting too many.
func TestLayoutMismatch(t *testing.T) {
	for _, m := range modes {
		other := modes[0]
		if !m.v2 {
			other = modes[1]
		}
		t.Run(m.name+" on "+other.name, func(t *testing.T) {
			t.Parallel()
			ns := testkit.Unique(t)
			ctx := testkit.Ctx(t)
			c1, c2 := testkit.Connect(t, zkAddr, ns), testkit.Connect(t, zkAddr, ns)
			held, err := semaphore.New(c1, semPath, 5, other.opts...).Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			s := semaphore.New(c2, semPath, 5, m.opts...)
			if l, err := s.Acquire(ctx); !errors.Is(err, semaphore.ErrLayoutMismatch) || l != nil {
				t.Fatalf("Acquire = %v, %v; want ErrLayoutMismatch", l, err)
			}
			if l, ok, err := s.TryAcquire(ctx); !errors.Is(err, semaphore.ErrLayoutMismatch) || l != nil || ok {
				t.Fatalf("TryAcquire = %v, %v; want ErrLayoutMismatch", l, err)
			}
			if ls, err := s.AcquireN(ctx, 2); !errors.Is(err, semaphore.ErrLayoutMismatch) || ls != nil {
				t.Fatalf("AcquireN = %v, %v; want ErrLayoutMismatch", ls, err)
			}
			// Nothing of the refused mode is left: only the holder's node.
			if got := leaseNodes(t, c1, other); len(got) != 1 {
				t.Fatalf("lease nodes of the holder's layout: %v", got)
			}
			if m.v2 {
				// Not even the directories it made on its way.
				_, node := framework.SplitPath(held.Node())
				onlyNodes(t, c1, semPath, []string{"leases", node}, "after refused V2 acquires")
				waitCount(t, c1, semPath+"/leases", 1) // the V1 holder's trace
			} else {
				for _, n := range testkit.Children(t, c1, semPath) {
					if strings.Contains(n, "lock-") {
						t.Fatalf("refused V1 left its node %s", n)
					}
				}
			}
			mustRelease(t, held)
		})
	}
}

// The lease holder's session is lost while it is partitioned: Done closes
// while still cut, and once the server expires the session its lease is
// free for others.
func TestLeaseLostWithSession(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			ns := testkit.Unique(t)
			ctx := testkit.Ctx(t)
			proxy := newProxy(t)
			cut := testkit.Connect(t, proxy.Addr(), ns, framework.WithSessionTimeout(sessionTimeout))
			l, err := semaphore.New(cut, semPath, 1, m.opts...).Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			other := testkit.Connect(t, zkAddr, ns)
			if l2, ok, err := semaphore.New(other, semPath, 1, m.opts...).TryAcquire(ctx); ok || err != nil {
				t.Fatalf("TryAcquire while held = %v, %v, %v; want busy (nil, false, nil)", l2, ok, err)
			}
			proxy.Cut()
			testkit.WaitClosed(t, l.Done(), "Done of a lease whose client is cut off")
			if !errors.Is(l.Err(), semaphore.ErrLockLost) {
				t.Fatalf("Err = %v, want ErrLockLost", l.Err())
			}
			// Still cut: the lease comes free when the server expires the
			// session (about the session timeout), not before Acquire.
			l2, err := semaphore.New(other, semPath, 1, m.opts...).Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if nodes := leaseChildren(t, other, m, semPath); len(nodes) != 1 || m.leaseDir(semPath)+"/"+nodes[0] != l2.Node() {
				t.Fatalf("lease nodes %v, want only the new holder's %s", nodes, l2.Node())
			}
			if err := l.Release(ctx); !errors.Is(err, semaphore.ErrLockLost) {
				t.Fatalf("Release of the lost lease = %v, want ErrLockLost", err)
			}
			proxy.Restore()
			mustRelease(t, l2)
		})
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	ctx := testkit.Ctx(t)
	tests := []struct {
		name string
		s    *semaphore.Semaphore
		want error
	}{
		{"nil client", semaphore.New(nil, semPath, 1), semaphore.ErrNilClient},
		{"relative path", semaphore.New(c, "sem", 1), semaphore.ErrInvalidPath},
		{"empty segment", semaphore.New(c, "/a//b", 1), semaphore.ErrInvalidPath},
		{"root", semaphore.New(c, "/", 1), semaphore.ErrInvalidPath},
		{"zero max", semaphore.New(c, semPath, 0), semaphore.ErrInvalidMaxLeases},
		{"negative max", semaphore.New(c, semPath, -3, semaphore.CuratorV2()), semaphore.ErrInvalidMaxLeases},
		{"nil count", semaphore.New(c, semPath, 1, semaphore.WithMaxLeasesFrom(nil)), semaphore.ErrInvalidMaxLeases},
		{"bad count", semaphore.New(c, semPath, 1, semaphore.WithMaxLeasesFrom(shared.NewCount(c, "bad", 1))), shared.ErrInvalidPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if l, err := tt.s.Acquire(ctx); l != nil || !errors.Is(err, tt.want) {
				t.Errorf("Acquire = %v, %v; want %v", l, err, tt.want)
			}
			if l, ok, err := tt.s.TryAcquire(ctx); l != nil || ok || !errors.Is(err, tt.want) {
				t.Errorf("TryAcquire = %v, %v, %v; want %v", l, ok, err, tt.want)
			}
			if ls, err := tt.s.AcquireN(ctx, 1); ls != nil || !errors.Is(err, tt.want) {
				t.Errorf("AcquireN = %v, %v; want %v", ls, err, tt.want)
			}
			if ps, err := tt.s.Participants(ctx); ps != nil || !errors.Is(err, tt.want) {
				t.Errorf("Participants = %v, %v; want %v", ps, err, tt.want)
			}
		})
	}
	for _, m := range modes {
		s := semaphore.New(c, semPath, 3, m.opts...)
		for _, n := range []int{0, -1, 4, math.MaxInt} {
			if ls, err := s.AcquireN(ctx, n); ls != nil || !errors.Is(err, semaphore.ErrInvalidLeaseCount) {
				t.Errorf("%s: AcquireN(%d) = %v, %v; want ErrInvalidLeaseCount", m.name, n, ls, err)
			}
		}
		//lint:ignore SA1012 a nil context is bad input under test
		if l, err := s.Acquire(nil); l != nil || !errors.Is(err, framework.ErrInvalidOption) {
			t.Errorf("%s: Acquire(nil) = %v, %v", m.name, l, err)
		}
	}
	if got := testkit.Children(t, c, semPath); len(got) != 0 {
		t.Fatalf("bad input left nodes: %v", got)
	}
}

// TryAcquire never waits; busy is (nil, false, nil) and leaves nothing; a
// lease comes with true, and never a nil lease with true.
func TestTryAcquire(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			c := testkit.Connect(t, zkAddr, testkit.Unique(t))
			ctx := testkit.Ctx(t)
			s := semaphore.New(c, semPath, 2, m.opts...)
			var held []*semaphore.Lease
			for i := 0; i < 5; i++ {
				l, ok, err := s.TryAcquire(ctx)
				if err != nil || (l != nil) != ok {
					t.Fatalf("try %d: TryAcquire = %v, %v, %v", i, l, ok, err)
				}
				if want := i < 2; ok != want {
					t.Fatalf("try %d: TryAcquire ok = %v, want %v", i, ok, want)
				}
				if l != nil {
					held = append(held, l)
				}
			}
			if got := leaseChildren(t, c, m, semPath); len(got) != 2 {
				t.Fatalf("failed tries left nodes: %v", got)
			}
			if !m.v2 {
				waitCount(t, c, semPath+"/leases", 2) // the holders' traces only
			}
			mustRelease(t, held[0])
			l, ok, err := s.TryAcquire(ctx)
			if !ok {
				t.Fatalf("TryAcquire after a release = %v, %v", ok, err)
			}
			mustRelease(t, l)
			mustRelease(t, held[1])
		})
	}
}

func TestAcquireN(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			ns := testkit.Unique(t)
			c := testkit.Connect(t, zkAddr, ns)
			ctx := testkit.Ctx(t)
			s := semaphore.New(c, semPath, 3, m.opts...)
			ls, err := s.AcquireN(ctx, 3)
			if err != nil || len(ls) != 3 {
				t.Fatalf("AcquireN(3) = %v, %v", ls, err)
			}
			seen := map[string]bool{}
			for _, l := range ls {
				seen[l.Node()] = true
			}
			if len(seen) != 3 {
				t.Fatalf("AcquireN(3) gave %d distinct nodes", len(seen))
			}
			for _, l := range ls {
				mustRelease(t, l)
			}

			// All or nothing: with one lease held elsewhere, AcquireN(3)
			// gets two, then gives them back when its deadline passes.
			other, err := semaphore.New(testkit.Connect(t, zkAddr, ns), semPath, 3, m.opts...).Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			dctx, cancel := context.WithTimeout(ctx, shortWait)
			defer cancel()
			if ls, err := s.AcquireN(dctx, 3); ls != nil || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("AcquireN(3) with one held elsewhere = %v, %v; want DeadlineExceeded", ls, err)
			}
			if got := leaseChildren(t, c, m, semPath); len(got) != 1 {
				t.Fatalf("failed AcquireN left leases: %v", got)
			}
			if !m.v2 {
				waitCount(t, c, semPath+"/leases", 1) // the holder's trace only
			}
			mustRelease(t, other)
			if ls, err = s.AcquireN(ctx, 3); err != nil {
				t.Fatal(err)
			}
			for _, l := range ls {
				mustRelease(t, l)
			}
		})
	}
}

// A semaphore is not reentrant: one handle, one client, each Acquire is
// another lease, and the max still holds.
func TestNotReentrant(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			c := testkit.Connect(t, zkAddr, testkit.Unique(t))
			ctx := testkit.Ctx(t)
			s := semaphore.New(c, semPath, 2, m.opts...)
			a, err := s.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			b, err := s.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if a.Node() == b.Node() {
				t.Fatal("two acquires share a node")
			}
			third := acquireAsync(ctx, s)
			waitChildren(t, c, m.leaseDir(semPath), "the third acquire waits", func(ch []string) bool { return len(ch) == 3 })
			pending(t, third, "third lease with max 2")
			mustRelease(t, a)
			r := await(t, third)
			if r.err != nil {
				t.Fatal(r.err)
			}
			mustRelease(t, b)
			mustRelease(t, r.lease)
			if _, _, err := c.Get(ctx, a.Node()); !errors.Is(err, zk.ErrNoNode) {
				t.Fatalf("released node still there: %v", err)
			}
		})
	}
}
