package conformance_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/leader"
	"github.com/gocurator/curator/recipes/multilock"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/recipes/rwlock"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/zktest"
)

// hold is what every hold of every recipe shows.
type hold interface {
	Done() <-chan struct{}
	Err() error
	Release(ctx context.Context) error
}

// kind makes a held hold and a waiter on the same lock, for one recipe.
type kind struct {
	name string
	// take acquires on c, waiting; it returns the hold and its node.
	take func(ctx context.Context, c *framework.Client, path string) (hold, string, error)
}

type leaseHold struct{ *semaphore.Lease }

// termHold is a leader's term: Resign is its Release.
type termHold struct{ *leader.Term }

func (h termHold) Release(ctx context.Context) error { return h.Resign(ctx) }

// FencingToken is the term's Token, under the name the other holds use.
func (h termHold) FencingToken() int64 { return h.Token() }

var kinds = []kind{
	{"mutex", func(ctx context.Context, c *framework.Client, p string) (hold, string, error) {
		m := mutex.New(c, p)
		err := m.Acquire(ctx)
		return m, m.Node(), err
	}},
	{"mutex with local hand-over", func(ctx context.Context, c *framework.Client, p string) (hold, string, error) {
		m := mutex.New(c, p, mutex.WithLocalHandover(4))
		err := m.Acquire(ctx)
		return m, m.Node(), err
	}},
	{"write lock with local hand-over", func(ctx context.Context, c *framework.Client, p string) (hold, string, error) {
		l := rwlock.New(c, p, rwlock.WithLocalHandover(4)).WriteLock()
		err := l.Acquire(ctx)
		return l, l.Node(), err
	}},
	{"write lock", func(ctx context.Context, c *framework.Client, p string) (hold, string, error) {
		l := rwlock.New(c, p).WriteLock()
		err := l.Acquire(ctx)
		return l, l.Node(), err
	}},
	{"semaphore V1 lease", func(ctx context.Context, c *framework.Client, p string) (hold, string, error) {
		l, err := semaphore.New(c, p, 1, semaphore.CuratorV1()).Acquire(ctx)
		if err != nil {
			return nil, "", err
		}
		return leaseHold{l}, l.Node(), nil
	}},
	{"semaphore V2 lease (default)", func(ctx context.Context, c *framework.Client, p string) (hold, string, error) {
		l, err := semaphore.New(c, p, 1).Acquire(ctx)
		if err != nil {
			return nil, "", err
		}
		return leaseHold{l}, l.Node(), nil
	}},
	{"semaphore mutex", func(ctx context.Context, c *framework.Client, p string) (hold, string, error) {
		m := semaphore.NewMutex(c, p)
		err := m.Acquire(ctx)
		return m, m.Node(), err
	}},
	{"leader term", func(ctx context.Context, c *framework.Client, p string) (hold, string, error) {
		t, err := leader.New(c, p).Campaign(ctx)
		if err != nil {
			return nil, "", err
		}
		return termHold{t}, t.Node(), nil
	}},
}

// holdKinds are kinds and the holds without a fencing surface of one
// node: a multi-lock (of a mutex and a semaphore mutex, so that it mixes
// recipes) is one hold of several nodes; its node here is its first
// member's, on the path the waiters queue on.
var holdKinds = append(slices.Clip(kinds), kind{"multi-lock",
	func(ctx context.Context, c *framework.Client, p string) (hold, string, error) {
		m := mutex.New(c, p)
		ml := multilock.New(c, multilock.Mutex(m), multilock.SemaphoreMutex(semaphore.NewMutex(c, p+"-sem")))
		err := ml.Acquire(ctx)
		return ml, m.Node(), err
	}})

// Close used to leave every hold believing it held (IsHeld true, Done
// open) although the session and its nodes were gone. Close must end every
// hold, before it returns, with framework.ErrClosed, and end every waiter
// with it too.
func TestCloseEndsHoldsAndWaiters(t *testing.T) {
	for _, k := range holdKinds {
		t.Run(k.name, func(t *testing.T) {
			addr := zkAddr
			ns := testkit.Unique(t)
			c, err := framework.Connect(testkit.Ctx(t), addr, framework.WithNamespace(ns))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			observer := testkit.Connect(t, addr, ns)
			ctx := testkit.Ctx(t)

			h, node, err := k.take(ctx, c, "/lock")
			if err != nil {
				t.Fatal(err)
			}
			// A read lock of another RWLock shares the hold.
			reader := rwlock.New(c, "/rw").ReadLock()
			if err := reader.Acquire(ctx); err != nil {
				t.Fatal(err)
			}
			waiterErr := make(chan error, 1)
			go func() {
				_, _, err := k.take(ctx, c, "/lock")
				waiterErr <- err
			}()
			testkit.Eventually(t, "waiter queued", func() bool {
				// A waiter of a cohort waits in the process, on the
				// holder's node.
				if lw, ok := h.(interface{ LocalWaiters() int }); ok && lw.LocalWaiters() > 0 {
					return true
				}
				return len(testkit.Children(t, observer, "/lock")) > 1 ||
					len(testkit.Children(t, observer, "/lock/leases")) > 1 ||
					len(testkit.Children(t, observer, "/lock/locks")) > 0
			})

			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-h.Done():
			default:
				t.Fatal("Done still open when Close returned")
			}
			if err := h.Err(); !errors.Is(err, framework.ErrClosed) {
				t.Fatalf("Err after Close = %v, want ErrClosed", err)
			}
			if err := h.Release(ctx); !errors.Is(err, framework.ErrClosed) {
				t.Fatalf("Release after Close = %v, want ErrClosed", err)
			}
			if reader.IsHeld() || !errors.Is(reader.Err(), framework.ErrClosed) {
				t.Fatalf("read lock after Close: held %v, Err %v", reader.IsHeld(), reader.Err())
			}
			select {
			case err := <-waiterErr:
				if !errors.Is(err, framework.ErrClosed) {
					t.Fatalf("waiter ended with %v, want ErrClosed", err)
				}
			case <-time.After(testkit.Deadline):
				t.Fatal("waiter still waiting after Close")
			}
			if st, err := observer.Exists(ctx, node); err != nil || st != nil {
				t.Fatalf("held node %s after Close: %v, %v", node, st, err)
			}
		})
	}
}

// Release(nil) used to end the hold locally and leave its node, which
// blocked everyone until the session ended and made the handle's next
// Acquire wait on itself. It must be refused before anything changes.
func TestReleaseNilContextChangesNothing(t *testing.T) {
	for _, k := range holdKinds {
		t.Run(k.name, func(t *testing.T) {
			addr := zkAddr
			ns := testkit.Unique(t)
			c := testkit.Connect(t, addr, ns)
			ctx := testkit.Ctx(t)
			h, node, err := k.take(ctx, c, "/lock")
			if err != nil {
				t.Fatal(err)
			}
			//lint:ignore SA1012 a nil context is the bad input under test
			if err := h.Release(nil); !errors.Is(err, framework.ErrInvalidOption) { //nolint:staticcheck
				t.Fatalf("Release(nil) = %v, want ErrInvalidOption", err)
			}
			if err := h.Err(); err != nil {
				t.Fatalf("Err after a refused Release = %v, want still held", err)
			}
			if st, err := c.Exists(ctx, node); err != nil || st == nil {
				t.Fatalf("node after a refused Release: %v, %v", st, err)
			}
			if err := h.Release(ctx); err != nil {
				t.Fatal(err)
			}
			// The next acquire on the same client does not wait on a
			// node left behind.
			actx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			h2, _, err := k.take(actx, c, "/lock")
			if err != nil {
				t.Fatalf("acquire after Release: %v", err)
			}
			if err := h2.Release(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// An acquire waiting while the connection is down used to return ~5 s
// after its deadline: the clean-up delete ran in the foreground with a
// bound of its own (5 s, started once the deadline had passed). The
// caller's deadline is the call's deadline; the delete goes on in the
// background and the node goes once the connection is back.
func TestAcquireDeadlineWhileDisconnected(t *testing.T) {
	for _, k := range holdKinds {
		t.Run(k.name, func(t *testing.T) {
			addr := zkAddr
			ns := testkit.Unique(t)
			proxy := zktest.NewProxy(t, addr)
			holder := testkit.Connect(t, addr, ns)
			c := testkit.Connect(t, proxy.Addr(), ns)
			ctx := testkit.Ctx(t)
			if _, _, err := k.take(ctx, holder, "/lock"); err != nil {
				t.Fatal(err)
			}
			before := participantNodes(t, holder, "/lock")
			actx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
			defer cancel()
			deadline, _ := actx.Deadline()
			errc := make(chan error, 1)
			go func() {
				_, _, err := k.take(actx, c, "/lock")
				errc <- err
			}()
			testkit.Eventually(t, "waiter queued", func() bool {
				return participantNodes(t, holder, "/lock") > before
			})
			proxy.Cut()
			var err error
			select {
			case err = <-errc:
			case <-time.After(testkit.Deadline):
				t.Fatal("acquire never returned")
			}
			late := time.Since(deadline)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("acquire = %v, want DeadlineExceeded", err)
			}
			t.Logf("returned %v after its deadline", late)
			// Still cut off, so the waiter's node cannot have been deleted
			// in the foreground: the clean-up is in the background.
			if n := participantNodes(t, holder, "/lock"); n <= before {
				t.Fatalf("%d participant nodes when the acquire returned while cut off, want the waiter's still there (more than %d)", n, before)
			}
			// A hang detector, not a stopwatch: a correct acquire returns
			// at its deadline, and the foreground clean-up this pins waited
			// its own 5 s bound after the deadline, which this catches
			// however slow the machine is; a tighter bound would only
			// measure the scheduler.
			if late >= 5*time.Second {
				t.Fatalf("acquire returned %v after its deadline: its clean-up waited in the foreground", late)
			}
			proxy.Restore()
			testkit.Eventually(t, "the waiter's node deleted", func() bool {
				return participantNodes(t, holder, "/lock") == before
			})
		})
	}
}

// participantNodes counts the lock and lease nodes under path: its
// children, and for the V2 semaphore the children of its "locks" and
// "leases" directories instead of the directories themselves (empty
// containers are reaped by the server within a second, so counting them
// would make the count depend on the reaper's timing).
func participantNodes(t *testing.T, c *framework.Client, path string) int {
	t.Helper()
	n := 0
	for _, child := range testkit.Children(t, c, path) {
		switch child {
		case "locks", "leases":
			n += len(testkit.Children(t, c, path+"/"+child))
		default:
			n++
		}
	}
	return n
}
