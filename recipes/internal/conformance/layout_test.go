package conformance_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/leader"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/recipes/rwlock"
	"github.com/gocurator/curator/recipes/semaphore"
)

// layoutKind is a lock recipe as its layout shows on a path: family is the
// layout its nodes have (kinds of one family share a path correctly),
// take acquires and holds, try is the acquire under test.
type layoutKind struct {
	name, family string
	take         func(ctx context.Context, c *framework.Client, p string) (release func() error, err error)
	try          func(ctx context.Context, c *framework.Client, p string) (release func() error, ok bool, err error)
}

// lease adapts a semaphore's acquires.
func lease(opts ...semaphore.Option) (func(context.Context, *framework.Client, string) (func() error, error),
	func(context.Context, *framework.Client, string) (func() error, bool, error)) {
	take := func(ctx context.Context, c *framework.Client, p string) (func() error, error) {
		l, err := semaphore.New(c, p, 1, opts...).Acquire(ctx)
		if err != nil {
			return nil, err
		}
		return func() error { return l.Release(context.WithoutCancel(ctx)) }, nil
	}
	try := func(ctx context.Context, c *framework.Client, p string) (func() error, bool, error) {
		l, ok, err := semaphore.New(c, p, 1, opts...).TryAcquire(ctx)
		if !ok {
			return nil, ok, err
		}
		return func() error { return l.Release(context.WithoutCancel(ctx)) }, true, nil
	}
	return take, try
}

// locker adapts a lock handle made by mk.
func locker[L interface {
	Acquire(context.Context) error
	TryAcquire(context.Context) (bool, error)
	Release(context.Context) error
}](mk func(c *framework.Client, p string) L) (func(context.Context, *framework.Client, string) (func() error, error),
	func(context.Context, *framework.Client, string) (func() error, bool, error)) {
	take := func(ctx context.Context, c *framework.Client, p string) (func() error, error) {
		l := mk(c, p)
		if err := l.Acquire(ctx); err != nil {
			return nil, err
		}
		return func() error { return l.Release(context.WithoutCancel(ctx)) }, nil
	}
	try := func(ctx context.Context, c *framework.Client, p string) (func() error, bool, error) {
		l := mk(c, p)
		ok, err := l.TryAcquire(ctx)
		if !ok {
			return nil, ok, err
		}
		return func() error { return l.Release(context.WithoutCancel(ctx)) }, true, nil
	}
	return take, try
}

func layoutKinds() []layoutKind {
	var ks []layoutKind
	add := func(name, family string, take func(context.Context, *framework.Client, string) (func() error, error),
		try func(context.Context, *framework.Client, string) (func() error, bool, error)) {
		ks = append(ks, layoutKind{name, family, take, try})
	}
	take, try := locker(func(c *framework.Client, p string) *mutex.Mutex { return mutex.New(c, p) })
	add("mutex", "lock-", take, try)
	take, try = lease(semaphore.CuratorV1())
	add("semaphore V1", "lock-", take, try)
	take, try = locker(func(c *framework.Client, p string) *rwlock.Lock { return rwlock.New(c, p).WriteLock() })
	add("write lock", "read/write", take, try)
	take, try = locker(func(c *framework.Client, p string) *rwlock.Lock { return rwlock.New(c, p).ReadLock() })
	add("read lock", "read/write", take, try)
	take, try = lease()
	add("semaphore V2 (default)", "leases", take, try)
	take, try = locker(func(c *framework.Client, p string) *semaphore.Mutex { return semaphore.NewMutex(c, p) })
	add("semaphore mutex", "leases", take, try)
	add("leader latch", "latch", func(ctx context.Context, c *framework.Client, p string) (func() error, error) {
		term, err := leader.New(c, p).Campaign(ctx)
		if err != nil {
			return nil, err
		}
		return func() error { return term.Resign(context.WithoutCancel(ctx)) }, nil
	}, func(ctx context.Context, c *framework.Client, p string) (func() error, bool, error) {
		// No try: an election refused for its layout returns at once; one
		// admitted would lead (or wait, which the deadline ends).
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		term, err := leader.New(c, p).Campaign(cctx)
		if err != nil {
			return nil, false, err
		}
		return func() error { return term.Resign(context.WithoutCancel(ctx)) }, true, nil
	})
	return ks
}

// snapshot lists the nodes at p and in its V2 directories (the
// directories themselves are containers, which a refused acquire removes
// when it leaves them empty, and the server reaps anyway).
func snapshot(t *testing.T, c *framework.Client, p string) string {
	t.Helper()
	out := ""
	for _, dir := range []string{p, p + "/leases", p + "/locks"} {
		ch := slices.DeleteFunc(testkit.Children(t, c, dir), func(n string) bool { return n == "leases" || n == "locks" })
		slices.Sort(ch)
		out += fmt.Sprintf("%s: %v\n", dir, ch)
	}
	return out
}

// Every pair of lock recipes (and the leader latch) of different layouts
// on one path: the second refuses with ErrLayoutMismatch and leaves
// nothing (the path is as the holder left it). One exception, which names cannot tell: a V1 semaphore
// has a mutex's layout (Curator's InterProcessSemaphore is its lock loop),
// so it shares a mutex's path as a mutex with max leases would; a mutex
// refuses a V1 semaphore by its trace in leases/.
func TestLayoutRefusal(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	c1, c2 := testkit.Connect(t, zkAddr, ns), testkit.Connect(t, zkAddr, ns)
	ks := layoutKinds()
	for i, held := range ks {
		for j, other := range ks {
			refuse := held.family != other.family || (held.name == "semaphore V1" && other.name == "mutex")
			if !refuse || (other.family == "latch" && held.family == "leases") {
				// An election does not look for a semaphore's leases/
				// (package leader's own layout check): not a row here.
				continue
			}
			t.Run(other.name+" on "+held.name, func(t *testing.T) {
				p := fmt.Sprintf("/layout-%d-%d", i, j)
				release, err := held.take(ctx, c1, p)
				if err != nil {
					t.Fatal(err)
				}
				before := snapshot(t, c1, p)
				r, ok, err := other.try(ctx, c2, p)
				if ok {
					_ = r()
				}
				if ok || !errors.Is(err, framework.ErrLayoutMismatch) {
					t.Fatalf("%s beside a %s: %v, %v; want ErrLayoutMismatch", other.name, held.name, ok, err)
				}
				testkit.Eventually(t, "the path as the holder left it", func() bool { return snapshot(t, c1, p) == before })
				if err := release(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
