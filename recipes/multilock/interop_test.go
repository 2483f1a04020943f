package multilock_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/multilock"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/recipes/rwlock"
	"github.com/gocurator/curator/recipes/semaphore"
)

// Curator's InterProcessMultiLock and ours on the same member locks
// exclude each other both ways, over mutexes (Curator's path constructor,
// its members in the opposite order to ours) and over a write lock with a
// semaphore mutex; a refused or timed-out acquire of ours leaves no node
// among Curator's. Java uses full paths: no namespace here, a path unique
// to the test instead.
func TestInteropWithCuratorMultiLock(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	base := "/interop/" + testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, "")
	java := curatorjava.StartDriver(t, zkAddr)
	expect := func(cmd, want string) {
		t.Helper()
		if got := java.MustDo(cmd); got != want {
			t.Fatalf("%s: got %q, want %q", cmd, got, want)
		}
	}
	a, b, rwp, smp := base+"/a", base+"/b", base+"/rw", base+"/sm"
	expect("multimutex jm "+b+","+a, "")
	expect("rwlock jr "+rwp, "")
	expect("semmutex js "+smp, "")
	expect("multilock jx jr.write,js", "")

	cases := []struct {
		name  string
		java  string
		ours  *multilock.MultiLock
		paths []string
	}{
		{"mutexes", "jm", multilock.NewMutexes(c, []string{a, b}), []string{a, b}},
		{"write lock and semaphore mutex", "jx", multilock.New(c,
			multilock.SemaphoreMutex(semaphore.NewMutex(c, smp)), multilock.Write(rwlock.New(c, rwp))),
			[]string{rwp, smp + "/leases", smp + "/locks"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.ours
			// Java holds: ours is refused and leaves nothing.
			expect("acquire "+tc.java+" 10000", "true")
			before := nodes(t, c, tc.paths...)
			if ok, err := l.TryAcquire(ctx); ok || err != nil {
				t.Fatalf("TryAcquire while Curator holds = %v, %v", ok, err)
			}
			dctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			err := l.Acquire(dctx)
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Acquire while Curator holds = %v", err)
			}
			if n := nodes(t, c, tc.paths...); n != before {
				t.Fatalf("%d nodes after our failed acquires, %d before", n, before)
			}
			// Java releases: ours gets in; then Java is refused.
			expect("release "+tc.java, "")
			if err := l.Acquire(ctx); err != nil {
				t.Fatal(err)
			}
			expect("acquire "+tc.java+" 300", "false")
			expect("holding "+tc.java, "false")
			// A waiting Curator gets in when ours releases.
			if err := l.Release(ctx); err != nil {
				t.Fatal(err)
			}
			expect("acquire "+tc.java+" 10000", "true")
			expect("release "+tc.java, "")
		})
	}
	awaitEmpty(t, c, a, b, rwp, smp+"/leases")
}

// Curator 5.4's acquire(time, unit) gives each member the whole time: with
// members freed one after another, each within the timeout of the last,
// it returns true long after its timeout. TestOneDeadlineForAllMembers is
// ours in the same schedule.
func TestCuratorMultiLockTimeoutIsPerMember(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	base := "/interop/" + testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, "")
	java := curatorjava.StartDriver(t, zkAddr)
	held := []*mutex.Mutex{mutex.New(c, base+"/a"), mutex.New(c, base+"/b")}
	for _, m := range held {
		if err := m.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	java.MustDo("multimutex jt " + base + "/a," + base + "/b")
	// /a is freed at 1 s and /b at 2 s: each waited for less than the
	// timeout, both for more.
	const timeout = 1800 * time.Millisecond
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
	start := time.Now()
	got := java.MustDo(fmt.Sprintf("acquire jt %d", timeout.Milliseconds()))
	took := time.Since(start)
	t.Logf("Curator's acquire(%v) returned %s after %v", timeout, got, took)
	if got != "true" || took < timeout {
		t.Fatalf("Curator's acquire(%v) returned %s after %v: expected true past its timeout", timeout, got, took)
	}
	java.MustDo("release jt")
}
