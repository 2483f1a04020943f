package multilock_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/multilock"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/recipes/rwlock"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/zktest"
)

// awaitEmpty waits until none of paths has a child: no lock node is left.
func awaitEmpty(t *testing.T, c *framework.Client, paths ...string) {
	t.Helper()
	testkit.Eventually(t, "no lock node left", func() bool {
		for _, p := range paths {
			if len(testkit.Children(t, c, p)) != 0 {
				return false
			}
		}
		return true
	})
}

// nodes counts the children of paths now.
func nodes(t *testing.T, c *framework.Client, paths ...string) int {
	t.Helper()
	n := 0
	for _, p := range paths {
		n += len(testkit.Children(t, c, p))
	}
	return n
}

// Every kind of member at once: while the multi-lock holds, each lock is
// refused to another client; after Release each is free and nothing (no
// node, no server watch) is left.
func TestMixedMembersAllOrNothing(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, ns)
	rw := rwlock.New(c, "/rw")
	sem := semaphore.New(c, "/sem", 2)
	l := multilock.New(c,
		multilock.Read(rw), multilock.Mutex(mutex.New(c, "/mutex")),
		multilock.Lease(sem), multilock.Write(rw), multilock.Lease(sem),
		multilock.SemaphoreMutex(semaphore.NewMutex(c, "/semmutex")),
		multilock.Lease(semaphore.New(c, "/v2", 1, semaphore.CuratorV2())),
	)
	if err := l.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if !l.IsHeld() || l.Err() != nil {
		t.Fatalf("IsHeld %v, Err %v after Acquire", l.IsHeld(), l.Err())
	}
	if !rw.WriteLock().IsHeld() || !rw.ReadLock().IsHeld() {
		t.Fatal("the write and the read lock of the RWLock are not both held")
	}

	o := testkit.Connect(t, zkAddr, ns)
	others := map[string]func() (bool, error){
		"mutex":     func() (bool, error) { return mutex.New(o, "/mutex").TryAcquire(ctx) },
		"read lock": func() (bool, error) { return rwlock.New(o, "/rw").ReadLock().TryAcquire(ctx) },
		"lease": func() (bool, error) {
			_, ok, err := semaphore.New(o, "/sem", 2).TryAcquire(ctx)
			return ok, err
		},
		"semaphore mutex": func() (bool, error) { return semaphore.NewMutex(o, "/semmutex").TryAcquire(ctx) },
		"V2 lease": func() (bool, error) {
			_, ok, err := semaphore.New(o, "/v2", 1, semaphore.CuratorV2()).TryAcquire(ctx)
			return ok, err
		},
	}
	for name, try := range others {
		if ok, err := try(); ok || err != nil {
			t.Fatalf("another client's %s while the multi-lock holds: %v, %v", name, ok, err)
		}
	}
	ops, err := l.CheckOps()
	if err != nil || len(ops) != 7 {
		t.Fatalf("CheckOps = %d ops, %v", len(ops), err)
	}
	if _, err := c.Multi(ctx, append(ops, framework.SetOp("/mutex", nil, -1))...); err != nil {
		t.Fatalf("a write behind the checks while held: %v", err)
	}

	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if l.IsHeld() || !errors.Is(l.Err(), multilock.ErrNotHeld) {
		t.Fatalf("after Release: IsHeld %v, Err %v", l.IsHeld(), l.Err())
	}
	testkit.WaitClosed(t, l.Done(), "Done after Release")
	if err := l.Release(ctx); !errors.Is(err, multilock.ErrNotHeld) {
		t.Fatalf("second Release = %v, want ErrNotHeld", err)
	}
	if _, err := l.CheckOps(); !errors.Is(err, multilock.ErrNotHeld) {
		t.Fatalf("CheckOps after Release = %v", err)
	}
	awaitEmpty(t, c, "/mutex", "/rw", "/sem", "/semmutex/leases", "/semmutex/locks", "/v2/leases", "/v2/locks")
	testkit.AwaitWatchCount(t, zkAddr, 0, c)
}

// Two multi-locks naming the same locks in opposite orders, on two
// clients, many rounds each: acquired in path order, they never deadlock
// (each round has a deadline) and never hold at once.
func TestOpposingOrdersDoNotDeadlock(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	const rounds = 15
	var inside atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, paths := range [][]string{{"/x", "/y", "/z"}, {"/z", "/y", "/x"}} {
		c := testkit.Connect(t, zkAddr, ns)
		l := multilock.NewMutexes(c, paths)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				err := l.Acquire(rctx)
				cancel()
				if err != nil {
					errs <- err
					return
				}
				if n := inside.Add(1); n != 1 {
					errs <- errors.New("two multi-locks held at once")
				}
				inside.Add(-1)
				if err := l.Release(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// ctx's deadline bounds the whole acquire, not each member (Curator's
// acquire(time, unit) gives every member the whole time, so it can return
// true long after its timeout): members freed one after another, each
// within the deadline of the last, still fail an acquire whose one
// deadline passes first, and it leaves nothing held.
func TestOneDeadlineForAllMembers(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	holder := testkit.Connect(t, zkAddr, ns)
	held := []*mutex.Mutex{mutex.New(holder, "/a"), mutex.New(holder, "/b")}
	for _, m := range held {
		if err := m.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	const timeout = 1500 * time.Millisecond
	// /a is freed at 1 s and /b at 2 s: 1 s of waiting each, less than
	// the timeout, 2 s in all, more than it.
	timers := []*time.Timer{
		time.AfterFunc(time.Second, func() { _ = held[0].Release(ctx) }),
		time.AfterFunc(2*time.Second, func() { _ = held[1].Release(ctx) }),
	}
	defer func() {
		for _, tm := range timers {
			tm.Stop()
		}
		for _, m := range held {
			_ = m.Release(ctx)
		}
	}()
	c := testkit.Connect(t, zkAddr, ns)
	l := multilock.NewMutexes(c, []string{"/a", "/b"})
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	err := l.Acquire(actx)
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire = %v after %v, want the deadline's error", err, took)
	}
	if took > timeout+time.Second {
		t.Fatalf("Acquire returned %v after it started, deadline %v", took, timeout)
	}
	t.Logf("Acquire failed after %v (deadline %v)", took, timeout)
	if l.IsHeld() {
		t.Fatal("held after a failed Acquire")
	}
	// /a was ours for a while: its node went before Acquire returned.
	for _, ch := range testkit.Children(t, c, "/a") {
		t.Fatalf("node %s left in /a by the failed acquire", ch)
	}
}

// A failed acquire, whatever ends it, releases what it took and leaves no
// node: its deadline, its cancellation, or a member's error.
func TestFailedAcquireLeavesNothing(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	holder := testkit.Connect(t, zkAddr, ns)
	busy := mutex.New(holder, "/b")
	if err := busy.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	defer busy.Release(ctx)
	c := testkit.Connect(t, zkAddr, ns)

	t.Run("deadline", func(t *testing.T) {
		l := multilock.NewMutexes(c, []string{"/b", "/a"})
		dctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		if err := l.Acquire(dctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Acquire = %v", err)
		}
		if n := nodes(t, c, "/a", "/b"); n != 1 {
			t.Fatalf("%d nodes in /a and /b after a timed-out acquire, want the holder's 1", n)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		l := multilock.NewMutexes(c, []string{"/a", "/b"})
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- l.Acquire(cctx) }()
		// Cancel once we hold /a and wait in /b.
		testkit.Eventually(t, "the acquire waits in /b", func() bool { return nodes(t, c, "/a", "/b") == 3 })
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("Acquire = %v", err)
		}
		if n := nodes(t, c, "/a", "/b"); n != 1 {
			t.Fatalf("%d nodes in /a and /b after a cancelled acquire, want the holder's 1", n)
		}
	})
	t.Run("member error", func(t *testing.T) {
		// The RWLock holds its read lock outside the multi-lock: its write
		// lock is an upgrade, refused at once, after /a was taken.
		rw := rwlock.New(c, "/rw")
		if err := rw.ReadLock().Acquire(ctx); err != nil {
			t.Fatal(err)
		}
		defer rw.ReadLock().Release(ctx)
		l := multilock.New(c, multilock.Mutex(mutex.New(c, "/a")), multilock.Write(rw))
		err := l.Acquire(ctx)
		if !errors.Is(err, rwlock.ErrUpgradeNotSupported) {
			t.Fatalf("Acquire = %v, want ErrUpgradeNotSupported", err)
		}
		if n := nodes(t, c, "/a"); n != 0 {
			t.Fatalf("%d nodes in /a after a failed acquire", n)
		}
		other := mutex.New(holder, "/a")
		if ok, err := other.TryAcquire(ctx); !ok || err != nil {
			t.Fatalf("/a after the failed acquire: %v, %v", ok, err)
		}
		if err := other.Release(ctx); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("try", func(t *testing.T) {
		l := multilock.NewMutexes(c, []string{"/0", "/b"})
		if ok, err := l.TryAcquire(ctx); ok || err != nil {
			t.Fatalf("TryAcquire with /b held elsewhere = %v, %v", ok, err)
		}
		if n := nodes(t, c, "/0", "/b"); n != 1 {
			t.Fatalf("%d nodes after a busy TryAcquire, want the holder's 1", n)
		}
	})
}

// A deadline while the connection is down is kept, and what the acquire
// took is deleted once the connection is back.
func TestFailedAcquireDuringCutLeavesNothing(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	holder := testkit.Connect(t, zkAddr, ns)
	busy := mutex.New(holder, "/b")
	if err := busy.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	defer busy.Release(ctx)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns)
	l := multilock.NewMutexes(c, []string{"/a", "/b"})
	actx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- l.Acquire(actx) }()
	testkit.Eventually(t, "the acquire waits in /b", func() bool { return nodes(t, holder, "/a", "/b") == 3 })
	proxy.Cut()
	testkit.WaitState(t, c, connstate.Suspended)
	deadline, _ := actx.Deadline()
	err := <-done
	if late := time.Since(deadline); late > time.Second {
		t.Fatalf("Acquire returned %v after its deadline while cut off", late)
	}
	if err == nil {
		t.Fatal("Acquire succeeded while cut off")
	}
	proxy.Restore()
	testkit.WaitState(t, c, connstate.Reconnected)
	awaitEmpty(t, holder, "/a")
	if n := nodes(t, holder, "/b"); n != 1 {
		t.Fatalf("%d nodes in /b, want the holder's 1", n)
	}
}

// A member lost with the connection ends the multi-lock's hold: Done
// closes, Err names the member and wraps ErrLockLost; Release releases the
// rest and frees the handle.
func TestDoneClosesWhenAMemberIsLost(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns)
	l := multilock.NewMutexes(c, []string{"/a", "/b"})
	if err := l.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	done := l.Done()
	proxy.Cut()
	testkit.WaitClosed(t, done, "Done after the connection was cut")
	err := l.Err()
	if !errors.Is(err, multilock.ErrLockLost) {
		t.Fatalf("Err = %v, want ErrLockLost", err)
	}
	t.Logf("Err: %v", err)
	proxy.Restore()
	testkit.WaitState(t, c, connstate.Reconnected)
	if err := l.Release(ctx); !errors.Is(err, multilock.ErrLockLost) {
		t.Fatalf("Release after the loss = %v, want ErrLockLost", err)
	}
	other := testkit.Connect(t, zkAddr, ns)
	awaitEmpty(t, other, "/a", "/b")
	if err := l.Acquire(ctx); err != nil {
		t.Fatalf("Acquire after the loss: %v", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// The handle is not an owner (as sync.Mutex): while held, Acquire waits for
// a Release, from any goroutine, and TryAcquire reports busy.
func TestHandleWaitsForItsOwnRelease(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	l := multilock.NewMutexes(c, []string{"/a", "/b"})
	if err := l.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := l.TryAcquire(ctx); ok || err != nil {
		t.Fatalf("TryAcquire while held = %v, %v", ok, err)
	}
	sctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := l.Acquire(sctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second Acquire = %v, want it to wait for Release", err)
	}
	second := make(chan error, 1)
	go func() { second <- l.Acquire(ctx) }()
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	tests := []struct {
		name string
		l    *multilock.MultiLock
		want error
	}{
		{"nil client", multilock.New(nil, multilock.Mutex(mutex.New(c, "/a"))), multilock.ErrNilClient},
		{"no member", multilock.New(c), multilock.ErrInvalidMembers},
		{"one mutex twice", multilock.NewMutexes(c, []string{"/a", "/a"}), multilock.ErrInvalidMembers},
		{"nil handle", nil, multilock.ErrNilHandle},
		{"bad path", multilock.NewMutexes(c, []string{"a"}), framework.ErrInvalidPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.l.Acquire(ctx); !errors.Is(err, tt.want) {
				t.Errorf("Acquire = %v, want %v", err, tt.want)
			}
			if ok, err := tt.l.TryAcquire(ctx); ok || !errors.Is(err, tt.want) {
				t.Errorf("TryAcquire = %v, %v, want %v", ok, err, tt.want)
			}
			if err := tt.l.Release(ctx); !errors.Is(err, multilock.ErrNotHeld) {
				t.Errorf("Release = %v, want ErrNotHeld", err)
			}
			if err := tt.l.Err(); !errors.Is(err, multilock.ErrNotHeld) {
				t.Errorf("Err = %v, want ErrNotHeld", err)
			}
			testkit.WaitClosed(t, tt.l.Done(), "Done of a multi-lock that holds nothing")
		})
	}
	l := multilock.NewMutexes(c, []string{"/a"})
	//lint:ignore SA1012 a nil ctx is what is tested
	if err := l.Acquire(nil); !errors.Is(err, framework.ErrInvalidOption) {
		t.Fatalf("Acquire(nil) = %v", err)
	}
	if err := l.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1012 a nil ctx is what is tested
	if err := l.Release(nil); !errors.Is(err, framework.ErrInvalidOption) || !l.IsHeld() {
		t.Fatalf("Release(nil) = %v, held %v: want refused, still held", err, l.IsHeld())
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
