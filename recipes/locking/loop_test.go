package locking_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/locking"
	"github.com/gocurator/curator/zktest"
)

// The loop's own specification: the tests drive it through the mutex's
// driver (mutexDriver, one holder), with no recipe around it. What a
// recipe adds (reentrancy per handle, options, revocation) is tested with
// the recipe.

// queuePath is the lock of these tests (layout_test.go's lockPath is the
// slot driver's).
const queuePath = "/locks/orders"

// mutexDriver is the mutex's driver: one holder.
var mutexDriver = locking.StandardDriver{LockName: "lock-"}

// newLoop returns the loop of a mutex on path.
func newLoop(c *framework.Client, path string) *locking.Loop {
	return locking.New(c, path, mutexDriver)
}

// mustAcquire acquires l, waiting, or fails the test.
func mustAcquire(t *testing.T, l *locking.Loop) *locking.Hold {
	t.Helper()
	h, err := l.Acquire(testkit.Ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if h == nil {
		t.Fatal("acquire returned no hold and no error")
	}
	return h
}

// participants lists the nodes of l's lock, holder first, and fails the
// test unless there are n.
func participants(t *testing.T, l *locking.Loop, n int) []string {
	t.Helper()
	ps, err := l.Participants(testkit.Ctx(t))
	if err != nil || len(ps) != n {
		t.Fatalf("participants %v, %v; want %d", ps, err, n)
	}
	return ps
}

// Cancel and deadline during the wait leave no node behind, and a failed
// acquire returns an error and no hold (never nil, nil).
func TestCancelAndDeadlineLeaveNoNode(t *testing.T) {
	ns := testkit.Unique(t)
	c1 := testkit.Connect(t, zkAddr, ns)
	c2 := testkit.Connect(t, zkAddr, ns)
	c3 := testkit.Connect(t, zkAddr, ns) // no watch of c2's left on the holder's node
	ctx := testkit.Ctx(t)
	holder := mustAcquire(t, newLoop(c1, queuePath))

	dctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if h, err := newLoop(c2, queuePath).Acquire(dctx); h != nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("deadline: got %v, %v; want no hold and DeadlineExceeded", h, err)
	}
	if got := testkit.Children(t, c1, queuePath); len(got) != 1 {
		t.Fatalf("deadline left nodes: %v", got)
	}

	cctx, cancel2 := context.WithCancel(ctx)
	w := acquireAsync(cctx, newLoop(c3, queuePath))
	// The waiter watches the holder's node: the cancel lands in the wait.
	testkit.AwaitWatch(t, zkAddr, c3, holder.Node())
	cancel2()
	if r := await(t, w); r.h != nil || !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancel: got %v, %v; want no hold and Canceled", r.h, r.err)
	}
	if got := testkit.Children(t, c1, queuePath); len(got) != 1 {
		t.Fatalf("cancel left nodes: %v", got)
	}
	release(t, holder)
	testkit.Eventually(t, "no nodes", func() bool { return len(testkit.Children(t, c1, queuePath)) == 0 })
}

// Cancel during a create whose reply is lost: the protected create's node is
// found and deleted; nothing is left once the connection is back.
func TestCancelDuringLostReplyCreate(t *testing.T) {
	ns := testkit.Unique(t)
	observer := testkit.Connect(t, zkAddr, ns)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns)
	ctx := testkit.Ctx(t)
	holder := mustAcquire(t, newLoop(observer, queuePath))
	fired := proxy.LoseNextCreateReply()
	actx, cancel := context.WithCancel(ctx)
	w := acquireAsync(actx, newLoop(c, queuePath))
	testkit.WaitClosed(t, fired, "lost-reply fault")
	// The reply was lost, not the create: the server made the node, so
	// what follows is a clean-up, not nothing to do.
	if got := testkit.Children(t, observer, queuePath); len(got) != 2 {
		t.Fatalf("nodes once the create's reply was lost: %v, want the holder's and the lost reply's", got)
	}
	cancel()
	if r := await(t, w); r.h != nil || !errors.Is(r.err, context.Canceled) {
		t.Fatalf("got %v, %v; want no hold and context.Canceled", r.h, r.err)
	}
	testkit.WaitState(t, c, connstate.Reconnected)
	testkit.Eventually(t, "only the holder's node is left", func() bool {
		return len(testkit.Children(t, observer, queuePath)) == 1
	})
	release(t, holder)
	testkit.Eventually(t, "no nodes", func() bool { return len(testkit.Children(t, observer, queuePath)) == 0 })
}

// A lost reply without cancel: the acquire finds its node and succeeds, with
// exactly one node.
func TestLostReplyCreateAcquiresOnce(t *testing.T) {
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns)
	observer := testkit.Connect(t, zkAddr, ns)
	fired := proxy.LoseNextCreateReply()
	h := mustAcquire(t, newLoop(c, queuePath))
	testkit.WaitClosed(t, fired, "lost-reply fault")
	if got := testkit.Children(t, observer, queuePath); len(got) != 1 || queuePath+"/"+got[0] != h.Node() {
		t.Fatalf("nodes after lost reply: %v, want the held %s alone", got, h.Node())
	}
	release(t, h)
}

// Cancel while the connection is cut: once it is back, the node is gone.
func TestCancelDuringCut(t *testing.T) {
	ns := testkit.Unique(t)
	observer := testkit.Connect(t, zkAddr, ns)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns)
	ctx := testkit.Ctx(t)
	holder := mustAcquire(t, newLoop(observer, queuePath))
	actx, cancel := context.WithCancel(ctx)
	w := acquireAsync(actx, newLoop(c, queuePath))
	testkit.AwaitWatch(t, zkAddr, c, holder.Node()) // waiting
	proxy.Cut()
	testkit.WaitState(t, c, connstate.Suspended)
	cancel()
	if r := await(t, w); r.h != nil || !errors.Is(r.err, context.Canceled) {
		t.Fatalf("got %v, %v; want no hold and context.Canceled", r.h, r.err)
	}
	proxy.Restore()
	testkit.WaitState(t, c, connstate.Reconnected)
	testkit.Eventually(t, "waiter's node deleted", func() bool { return len(testkit.Children(t, observer, queuePath)) == 1 })
	release(t, holder)
	testkit.Eventually(t, "no nodes", func() bool { return len(testkit.Children(t, observer, queuePath)) == 0 })
}

// Holder cut past the session timeout: Done closes while still cut, another
// client acquires after the server expires the session, fencing tokens grow.
func TestHolderCutPastSessionTimeout(t *testing.T) {
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	// SessionPolicy: only the session's end ends the hold, so Done closing
	// here is the client-side expiry at work.
	c := testkit.Connect(t, proxy.Addr(), ns, framework.WithSessionTimeout(1500*time.Millisecond),
		framework.WithErrorPolicy(connstate.SessionPolicy{}))
	other := testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
	h := mustAcquire(t, newLoop(c, queuePath))
	first := h.FencingToken()
	check := h.CheckOp()
	proxy.Cut()
	testkit.WaitState(t, c, connstate.Suspended)
	if err := h.Err(); err != nil {
		t.Fatalf("SessionPolicy: Suspended ended the hold: %v", err)
	}
	testkit.WaitClosed(t, h.Done(), "Done while cut")
	if !errors.Is(h.Err(), locking.ErrLockLost) {
		t.Fatalf("Err = %v, want ErrLockLost", h.Err())
	}
	if c.State() != connstate.Lost {
		t.Fatalf("state %v while cut, want Lost", c.State())
	}
	next := mustAcquire(t, newLoop(other, queuePath)) // waits for the server's expiry
	if next.FencingToken() <= first {
		t.Fatalf("token %d not above %d", next.FencingToken(), first)
	}
	proxy.Restore()
	testkit.WaitState(t, c, connstate.Reconnected)
	if err := h.Release(ctx); !errors.Is(err, locking.ErrLockLost) {
		t.Fatalf("release after loss = %v, want ErrLockLost", err)
	}
	// The old holder's fenced write is rejected by the server.
	_, err := c.Multi(ctx, check, framework.SetOp("/resource", []byte("stale"), -1))
	if !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("stale fenced write: %v, want ErrNoNode", err)
	}
	release(t, next)
}

// StandardPolicy: Suspended ends the hold at once; the stale node is deleted
// when the connection is back on the same session, so it blocks nobody.
func TestSuspendedEndsHoldUnderStandardPolicy(t *testing.T) {
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns)
	observer := testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
	l := newLoop(c, queuePath)
	h := mustAcquire(t, l)
	session := c.SessionID()
	proxy.Cut()
	testkit.WaitClosed(t, h.Done(), "Done on Suspended")
	if !errors.Is(h.Err(), locking.ErrLockLost) {
		t.Fatalf("after Suspended: err %v, want ErrLockLost", h.Err())
	}
	proxy.Restore()
	testkit.WaitState(t, c, connstate.Reconnected)
	if c.SessionID() != session {
		t.Fatal("session changed; this test needs a short cut")
	}
	// The node outlived the cut with its session: only our delete takes it.
	testkit.Eventually(t, "stale node deleted", func() bool { return len(testkit.Children(t, observer, queuePath)) == 0 })
	if err := h.Release(ctx); !errors.Is(err, locking.ErrLockLost) {
		t.Fatalf("release after loss = %v", err)
	}
	release(t, mustAcquire(t, l)) // the loop grants again
}

// SessionPolicy: a short cut does not end the hold.
func TestShortCutKeepsHoldUnderSessionPolicy(t *testing.T) {
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns, framework.WithErrorPolicy(connstate.SessionPolicy{}))
	observer := testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
	h := mustAcquire(t, newLoop(c, queuePath))
	proxy.Cut()
	testkit.WaitState(t, c, connstate.Suspended)
	proxy.Restore()
	testkit.WaitState(t, c, connstate.Reconnected)
	select {
	case <-h.Done():
		t.Fatalf("hold ended: %v", h.Err())
	default:
	}
	if st, err := observer.Exists(ctx, h.Node()); err != nil || st == nil || st.EphemeralOwner != c.SessionID() {
		t.Fatalf("held node %s after the cut: %v, %v", h.Node(), st, err)
	}
	if err := h.Release(ctx); err != nil { // ErrLockLost if the hold had ended meanwhile
		t.Fatal(err)
	}
}

// A waiter survives Suspended → Reconnected on the same session and keeps its
// place (its node).
func TestWaiterKeepsPlaceAcrossSuspend(t *testing.T) {
	ns := testkit.Unique(t)
	observer := testkit.Connect(t, zkAddr, ns)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns)
	ctx := testkit.Ctx(t)
	holder := mustAcquire(t, newLoop(observer, queuePath))
	w := acquireAsync(ctx, newLoop(c, queuePath))
	testkit.AwaitWatch(t, zkAddr, c, holder.Node())
	before := participants(t, newLoop(observer, queuePath), 2)
	session := c.SessionID()
	proxy.Cut()
	testkit.WaitState(t, c, connstate.Suspended)
	proxy.Restore()
	testkit.WaitState(t, c, connstate.Reconnected)
	if c.SessionID() != session {
		t.Fatal("session changed; this test needs a short cut")
	}
	release(t, holder)
	r := await(t, w)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.h.Node() != before[1] {
		t.Fatalf("waiter's node changed from %s to %s", before[1], r.h.Node())
	}
	release(t, r.h)
}

// The hold is never granted on a node that is gone: deleted by an operator
// while waiting (the watched predecessor then goes too).
func TestNeverGrantsAGoneNode(t *testing.T) {
	ns := testkit.Unique(t)
	c1 := testkit.Connect(t, zkAddr, ns)
	c2 := testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
	holder := mustAcquire(t, newLoop(c1, queuePath))
	w := acquireAsync(ctx, newLoop(c2, queuePath))
	testkit.AwaitWatch(t, zkAddr, c2, holder.Node()) // waiting on its node
	ps := participants(t, newLoop(c1, queuePath), 2)
	// The operator deletes the waiter's node, then the holder releases.
	if err := c1.Delete(ctx, ps[1]); err != nil {
		t.Fatal(err)
	}
	release(t, holder)
	grantedANewNode(t, w, ps[1], c1, c2, "the deleted node")
}

// grantedANewNode checks that the waiter w holds a node other than gone,
// owned (per checker) by waiter's current session, and releases it.
func grantedANewNode(t *testing.T, w <-chan acquired, gone string, checker, waiter *framework.Client, what string) {
	t.Helper()
	r := await(t, w)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.h.Node() == gone {
		t.Fatal("granted " + what)
	}
	_, stat, err := checker.Get(testkit.Ctx(t), r.h.Node())
	if err != nil || stat.EphemeralOwner != waiter.SessionID() {
		t.Fatalf("held node %s: %v (stat %v, session %x)", r.h.Node(), err, stat, waiter.SessionID())
	}
	release(t, r.h)
}

// ... nor on a node lost with its session.
func TestNeverGrantsANodeOfALostSession(t *testing.T) {
	ns := testkit.Unique(t)
	holderClient := testkit.Connect(t, zkAddr, ns)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns, framework.WithSessionTimeout(1500*time.Millisecond))
	ctx := testkit.Ctx(t)
	holder := mustAcquire(t, newLoop(holderClient, queuePath))
	w := acquireAsync(ctx, newLoop(c, queuePath))
	testkit.AwaitWatch(t, zkAddr, c, holder.Node())
	ps := participants(t, newLoop(holderClient, queuePath), 2)
	proxy.Cut()
	testkit.WaitState(t, c, connstate.Lost)
	// The server expires the waiter's session too; the holder releases.
	testkit.Eventually(t, "server expired the waiter", func() bool {
		return len(testkit.Children(t, holderClient, queuePath)) == 1
	})
	release(t, holder)
	proxy.Restore()
	grantedANewNode(t, w, ps[1], holderClient, c, "the node of the lost session")
}

// After 1,000 contended cycles the test's sessions hold no watch when idle;
// with waiters they hold at most three per waiter (the node ahead, the one
// before it, its own) and the first waiter two (no node before the holder),
// and a release wakes one waiter. Watches are counted per session (wchc),
// so that other tests' watches on the shared server do not count.
func TestWatchesPerWaiterBounded(t *testing.T) {
	ns := testkit.Unique(t)
	const handles, cycles = 4, 1000
	clients := make([]*framework.Client, handles)
	for i := range clients {
		clients[i] = testkit.Connect(t, zkAddr, ns)
	}
	watches := func() int { return testkit.WatchCount(t, zkAddr, clients...) }
	var wg sync.WaitGroup
	var count atomic.Int32
	for i := 0; i < handles; i++ {
		l := newLoop(clients[i], queuePath)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for count.Add(1) <= cycles {
				h, err := l.Acquire(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				if err := h.Release(context.Background()); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	testkit.Eventually(t, "no watches when idle", func() bool { return watches() == 0 })

	ctx := testkit.Ctx(t)
	holder := mustAcquire(t, newLoop(clients[0], queuePath))
	var waiters []<-chan acquired
	for i := 1; i < handles; i++ {
		waiters = append(waiters, acquireAsync(ctx, newLoop(clients[i], queuePath)))
		testkit.Eventually(t, "waiter queued", func() bool { return len(testkit.Children(t, clients[0], queuePath)) == i+1 })
	}
	want := 3*len(waiters) - 1
	testkit.Eventually(t, fmt.Sprintf("%d watches of %d waiters", want, len(waiters)), func() bool { return watches() == want })
	release(t, holder)
	// Exactly one waiter wakes: the first; the others keep their watches.
	first := await(t, waiters[0])
	if first.err != nil {
		t.Fatal(first.err)
	}
	// The first waiter holds; the watch on its own node stays until the
	// node goes: 1. The second waiter's watch on the node before its
	// predecessor (the old holder) fired; it lists again and, the new
	// holder alone ahead of it, keeps 2. The others keep their 3.
	want = 1 + 2 + 3*(len(waiters)-2)
	testkit.Eventually(t, fmt.Sprintf("%d watches of the remaining waiters", want), func() bool { return watches() == want })
	// The second waiter has set its watches again (the count says so)
	// and waits: a wrong grant to it or to a later one would be back.
	for _, w := range waiters[1:] {
		select {
		case r := <-w:
			t.Fatalf("a second waiter woke and returned %v, %v", r.h, r.err)
		default:
		}
	}
	release(t, first.h)
	for _, w := range waiters[1:] {
		r := await(t, w)
		if r.err != nil {
			t.Fatal(r.err)
		}
		release(t, r.h)
	}
	testkit.Eventually(t, "no watches at the end", func() bool { return watches() == 0 })
}

// A cancelled acquire leaves no node at the moment it returns, even when
// the cancel lands while its create is still in flight.
func TestCancelledAcquireLeavesNothingOnReturn(t *testing.T) {
	ns := testkit.Unique(t)
	c1 := testkit.Connect(t, zkAddr, ns)
	c2 := testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
	holder := mustAcquire(t, newLoop(c1, queuePath))
	l := newLoop(c2, queuePath)
	for i := 0; i < 150; i++ {
		actx, cancel := context.WithCancel(ctx)
		// Cancel at a spread of moments: before the create is sent, while
		// it is in flight, and while waiting.
		delay := time.Duration(i%15) * 100 * time.Microsecond
		timer := time.AfterFunc(delay, cancel)
		h, err := l.Acquire(actx)
		timer.Stop()
		cancel()
		if h != nil || !errors.Is(err, context.Canceled) {
			t.Fatalf("iteration %d: %v, %v; want no hold and context.Canceled", i, h, err)
		}
		if got := testkit.Children(t, c1, queuePath); len(got) != 1 {
			t.Fatalf("iteration %d (cancel after %v): nodes on return: %v", i, delay, got)
		}
	}
	release(t, holder)
}

// TestUncontendedAcquireOneRoundTrip and TestHandOverOneRoundTrip, which
// count an acquire's requests through OpenTelemetry's SDK, are in the
// telemetrytests module (telemetrytests/recipes/locking), so that the
// library's go.mod does not require the SDK.

// The grant without a read must never be given to a waiter whose node is
// gone: here an operator deletes the waiter's node and the holder's in one
// transaction, the waiter's first, so the waiter hears of its own node's
// deletion before its predecessor's. It must make a new node and hold with
// that one.
func TestNoGrantWithoutOwnNode(t *testing.T) {
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	admin := testkit.Connect(t, zkAddr, ns)
	c := testkit.Connect(t, zkAddr, ns)
	for i := 0; i < 5; i++ {
		h := mustAcquire(t, newLoop(admin, "/lock"))
		w := newLoop(c, "/lock")
		got := acquireAsync(ctx, w)
		testkit.AwaitWatch(t, zkAddr, c, h.Node()) // waiting, its watches set
		ps := participants(t, w, 2)
		if _, err := admin.Multi(ctx, framework.DeleteOp(ps[1], -1), framework.DeleteOp(ps[0], -1)); err != nil {
			t.Fatal(err)
		}
		r := await(t, got)
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.h.Node() == ps[1] {
			t.Fatalf("round %d: granted on the deleted node %s", i, ps[1])
		}
		st, err := admin.Exists(ctx, r.h.Node())
		if err != nil || st == nil || st.EphemeralOwner != c.SessionID() {
			t.Fatalf("round %d: held node %s: %v, %v", i, r.h.Node(), st, err)
		}
		_ = h.Release(ctx) // its node is gone: the error does not matter here
		release(t, r.h)
	}
}
