package mutex_test

import (
	"context"
	"errors"
	"math/rand"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locking"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/zktest"
)

const lockPath = "/locks/orders"

// 16 handles over 4 clients, 2,000 acquisitions: never two holders, checked
// in-process and by an ephemeral marker node; grants follow node order.
func TestNeverTwoHoldersAndFIFO(t *testing.T) {
	srv := server(t)
	ns := namespace(t)
	const clients, perClient, total = 4, 4, 2000
	var (
		holders atomic.Int32
		grants  atomic.Int32
		mu      sync.Mutex
		order   []int32 // sequence numbers in grant order
	)
	var wg sync.WaitGroup
	errc := make(chan error, clients*perClient)
	for i := 0; i < clients; i++ {
		c := connect(t, srv.ConnectString(), ns)
		for j := 0; j < perClient; j++ {
			m := mutex.New(c, lockPath)
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := context.Background()
				for grants.Load() < total {
					if err := m.Acquire(ctx); err != nil {
						errc <- err
						return
					}
					n := grants.Add(1)
					if h := holders.Add(1); h != 1 {
						errc <- errors.New("two holders in process")
					}
					// The marker must not exist when a new holder makes it.
					if _, err := c.Create(ctx, "/marker", []byte{}, framework.WithMode(framework.Ephemeral)); err != nil {
						errc <- err
					}
					seq, _ := locking.Sequence(m.Node(), "lock-")
					mu.Lock()
					order = append(order, seq)
					mu.Unlock()
					if err := c.Delete(ctx, "/marker"); err != nil {
						errc <- err
					}
					holders.Add(-1)
					if err := m.Release(ctx); err != nil {
						errc <- err
						return
					}
					if n >= total {
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if len(order) < total {
		t.Fatalf("only %d acquisitions", len(order))
	}
	if !sort.SliceIsSorted(order, func(i, j int) bool { return locking.Before(order[i], order[j]) }) {
		t.Fatal("grants did not follow node sequence order")
	}
	for i := 1; i < len(order); i++ {
		if !locking.Before(order[i-1], order[i]) {
			t.Fatalf("grant %d: seq %d after %d", i, order[i], order[i-1])
		}
	}
}

func TestReentrancyPerHandle(t *testing.T) {
	srv := server(t)
	c := connect(t, srv.ConnectString(), namespace(t))
	ctx := ctxT(t)
	m := mutex.New(c, lockPath)
	for i := 0; i < 3; i++ {
		if err := m.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := children(t, c, lockPath); len(got) != 1 {
		t.Fatalf("3 acquires made %d nodes: %v", len(got), got)
	}
	other := mutex.New(c, lockPath) // same client, other handle: excluded
	if ok, err := other.TryAcquire(ctx); ok || err != nil {
		t.Fatalf("second handle TryAcquire = %v, %v", ok, err)
	}
	if got := children(t, c, lockPath); len(got) != 1 {
		t.Fatalf("failed TryAcquire left a node: %v", got)
	}
	for i := 0; i < 3; i++ {
		if !m.IsHeld() {
			t.Fatalf("not held before release %d", i)
		}
		if err := m.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if m.IsHeld() {
		t.Fatal("held after 3 releases")
	}
	if err := m.Release(ctx); !errors.Is(err, mutex.ErrNotHeld) {
		t.Fatalf("extra release = %v, want ErrNotHeld", err)
	}
	if got := children(t, c, lockPath); len(got) != 0 {
		t.Fatalf("nodes left: %v", got)
	}
	if ok, err := other.TryAcquire(ctx); !ok || err != nil {
		t.Fatalf("other handle after release: %v, %v", ok, err)
	}
	if err := other.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestLayoutAndData(t *testing.T) {
	srv := server(t)
	c := connect(t, srv.ConnectString(), namespace(t))
	ctx := ctxT(t)
	m := mutex.New(c, lockPath)
	if err := m.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	defer m.Release(ctx)
	_, name := framework.SplitPath(m.Node())
	if !framework.IsProtected(name) || framework.StripProtected(name)[:5] != "lock-" {
		t.Fatalf("node %q is not _c_<uuid>-lock-<seq>", name)
	}
	data, stat, err := c.Get(ctx, m.Node())
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != string(c.DefaultData()) {
		t.Fatalf("data %q, want the client's default data %q", data, c.DefaultData())
	}
	if stat.EphemeralOwner != c.SessionID() || m.FencingToken() != stat.Czxid {
		t.Fatalf("owner %x token %d; want %x %d", stat.EphemeralOwner, m.FencingToken(), c.SessionID(), stat.Czxid)
	}
	ps, err := m.Participants(ctx)
	if err != nil || len(ps) != 1 || ps[0] != m.Node() {
		t.Fatalf("participants %v, %v", ps, err)
	}
	parent, err := c.Exists(ctx, lockPath)
	if err != nil || parent == nil {
		t.Fatalf("lock path: %v %v", parent, err)
	}
	custom := mutex.New(c, "/locks/custom", mutex.WithData([]byte("worker-7")))
	if err := custom.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if data, _, _ := c.Get(ctx, custom.Node()); string(data) != "worker-7" {
		t.Fatalf("WithData: node data %q", data)
	}
	if err := custom.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestWaitersQueueAndHandOver(t *testing.T) {
	srv := server(t)
	ns := namespace(t)
	c1 := connect(t, srv.ConnectString(), ns)
	c2 := connect(t, srv.ConnectString(), ns)
	ctx := ctxT(t)
	a, b := mutex.New(c1, lockPath), mutex.New(c2, lockPath)
	if err := a.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { got <- b.Acquire(ctx) }()
	eventually(t, "b waits", func() bool { return len(children(t, c1, lockPath)) == 2 })
	ps, err := a.Participants(ctx)
	if err != nil || ps[0] != a.Node() {
		t.Fatalf("participants %v (holder first), %v", ps, err)
	}
	select {
	case err := <-got:
		t.Fatalf("b acquired while a holds: %v", err)
	default:
	}
	tokenA := a.FencingToken()
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if b.FencingToken() <= tokenA {
		t.Fatalf("fencing token did not grow: %d then %d", tokenA, b.FencingToken())
	}
	if err := b.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// Cancel and deadline during the wait leave no node behind.
func TestCancelAndDeadlineLeaveNoNode(t *testing.T) {
	srv := server(t)
	ns := namespace(t)
	c1 := connect(t, srv.ConnectString(), ns)
	c2 := connect(t, srv.ConnectString(), ns)
	ctx := ctxT(t)
	holder := mutex.New(c1, lockPath)
	if err := holder.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	waiter := mutex.New(c2, lockPath)

	dctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := waiter.Acquire(dctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("deadline: got %v", err)
	}
	if got := children(t, c1, lockPath); len(got) != 1 {
		t.Fatalf("deadline left nodes: %v", got)
	}

	cctx, cancel2 := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- waiter.Acquire(cctx) }()
	eventually(t, "waiter queued", func() bool { return len(children(t, c1, lockPath)) == 2 })
	cancel2()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: got %v", err)
	}
	if got := children(t, c1, lockPath); len(got) != 1 {
		t.Fatalf("cancel left nodes: %v", got)
	}
	if waiter.IsHeld() || !errors.Is(waiter.Err(), mutex.ErrNotHeld) {
		t.Fatalf("failed acquire left the handle held: %v", waiter.Err())
	}
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, "no nodes", func() bool { return len(children(t, c1, lockPath)) == 0 })
}

// Cancel during a create whose reply is lost: the protected create's node is
// found and deleted; nothing is left once the connection is back.
func TestCancelDuringLostReplyCreate(t *testing.T) {
	srv := server(t)
	ns := namespace(t)
	observer := connect(t, srv.ConnectString(), ns)
	proxy := zktest.NewProxy(t, srv.ConnectString())
	c := connect(t, proxy.Addr(), ns)
	ctx := ctxT(t)
	holder := mutex.New(observer, lockPath)
	if err := holder.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	m := mutex.New(c, lockPath)
	fired := proxy.LoseNextCreateReply()
	actx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Acquire(actx) }()
	waitClosed(t, fired, "lost-reply fault")
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	waitState(t, c, connstate.Reconnected)
	eventually(t, "only the holder's node is left", func() bool {
		return len(children(t, observer, lockPath)) == 1
	})
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, "no nodes", func() bool { return len(children(t, observer, lockPath)) == 0 })
}

// A lost reply without cancel: the acquire finds its node and succeeds, with
// exactly one node.
func TestLostReplyCreateAcquiresOnce(t *testing.T) {
	srv := server(t)
	ns := namespace(t)
	proxy := zktest.NewProxy(t, srv.ConnectString())
	c := connect(t, proxy.Addr(), ns)
	observer := connect(t, srv.ConnectString(), ns)
	ctx := ctxT(t)
	m := mutex.New(c, lockPath)
	fired := proxy.LoseNextCreateReply()
	if err := m.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, fired, "lost-reply fault")
	if got := children(t, observer, lockPath); len(got) != 1 {
		t.Fatalf("nodes after lost reply: %v", got)
	}
	if err := m.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// Cancel while the connection is cut: once it is back, the node is gone.
func TestCancelDuringCut(t *testing.T) {
	srv := server(t)
	ns := namespace(t)
	observer := connect(t, srv.ConnectString(), ns)
	proxy := zktest.NewProxy(t, srv.ConnectString())
	c := connect(t, proxy.Addr(), ns)
	ctx := ctxT(t)
	holder := mutex.New(observer, lockPath)
	if err := holder.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	m := mutex.New(c, lockPath)
	actx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Acquire(actx) }()
	eventually(t, "waiter queued", func() bool { return len(children(t, observer, lockPath)) == 2 })
	proxy.Cut()
	waitState(t, c, connstate.Suspended)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	proxy.Restore()
	waitState(t, c, connstate.Reconnected)
	eventually(t, "waiter's node deleted", func() bool { return len(children(t, observer, lockPath)) == 1 })
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, "no nodes", func() bool { return len(children(t, observer, lockPath)) == 0 })
}

// Holder cut past the session timeout: Done closes while still cut, another
// client acquires after the server expires the session, fencing tokens grow.
func TestHolderCutPastSessionTimeout(t *testing.T) {
	srv := server(t)
	ns := namespace(t)
	proxy := zktest.NewProxy(t, srv.ConnectString())
	// SessionPolicy: only the session's end ends the hold, so Done closing
	// here is the client-side expiry at work.
	c := connect(t, proxy.Addr(), ns, framework.WithSessionTimeout(1500*time.Millisecond),
		framework.WithErrorPolicy(connstate.SessionPolicy{}))
	other := connect(t, srv.ConnectString(), ns)
	ctx := ctxT(t)
	m := mutex.New(c, lockPath)
	if err := m.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	first := m.FencingToken()
	check, err := m.CheckOp()
	if err != nil {
		t.Fatal(err)
	}
	proxy.Cut()
	waitState(t, c, connstate.Suspended)
	if !m.IsHeld() {
		t.Fatal("SessionPolicy: Suspended ended the hold")
	}
	waitClosed(t, m.Done(), "Done while cut")
	if !errors.Is(m.Err(), mutex.ErrLockLost) {
		t.Fatalf("Err = %v, want ErrLockLost", m.Err())
	}
	if c.State() != connstate.Lost {
		t.Fatalf("state %v while cut, want Lost", c.State())
	}
	next := mutex.New(other, lockPath)
	if err := next.Acquire(ctx); err != nil { // waits for the server's expiry
		t.Fatal(err)
	}
	if next.FencingToken() <= first {
		t.Fatalf("token %d not above %d", next.FencingToken(), first)
	}
	proxy.Restore()
	waitState(t, c, connstate.Reconnected)
	if err := m.Release(ctx); !errors.Is(err, mutex.ErrLockLost) {
		t.Fatalf("release after loss = %v, want ErrLockLost", err)
	}
	// The old holder's fenced write is rejected by the server.
	_, err = c.Multi(ctx, check, framework.SetOp("/resource", []byte("stale"), -1))
	if !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("stale fenced write: %v, want ErrNoNode", err)
	}
	if err := next.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// StandardPolicy: Suspended ends the hold at once; the stale node is deleted
// when the connection is back on the same session, so it blocks nobody.
func TestSuspendedEndsHoldUnderStandardPolicy(t *testing.T) {
	srv := server(t)
	ns := namespace(t)
	proxy := zktest.NewProxy(t, srv.ConnectString())
	c := connect(t, proxy.Addr(), ns)
	observer := connect(t, srv.ConnectString(), ns)
	ctx := ctxT(t)
	m := mutex.New(c, lockPath)
	if err := m.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	session := c.SessionID()
	proxy.Cut()
	waitClosed(t, m.Done(), "Done on Suspended")
	if !errors.Is(m.Err(), mutex.ErrLockLost) || m.IsHeld() || m.FencingToken() != 0 {
		t.Fatalf("after Suspended: err %v held %v", m.Err(), m.IsHeld())
	}
	proxy.Restore()
	waitState(t, c, connstate.Reconnected)
	if c.SessionID() != session {
		t.Fatal("session changed; this test needs a short cut")
	}
	eventually(t, "stale node deleted", func() bool { return len(children(t, observer, lockPath)) == 0 })
	if err := m.Release(ctx); !errors.Is(err, mutex.ErrLockLost) {
		t.Fatalf("release after loss = %v", err)
	}
	if err := m.Acquire(ctx); err != nil { // the handle is usable again
		t.Fatal(err)
	}
	if err := m.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// SessionPolicy: a short cut does not end the hold.
func TestShortCutKeepsHoldUnderSessionPolicy(t *testing.T) {
	srv := server(t)
	proxy := zktest.NewProxy(t, srv.ConnectString())
	c := connect(t, proxy.Addr(), namespace(t), framework.WithErrorPolicy(connstate.SessionPolicy{}))
	ctx := ctxT(t)
	m := mutex.New(c, lockPath)
	if err := m.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	proxy.Cut()
	waitState(t, c, connstate.Suspended)
	proxy.Restore()
	waitState(t, c, connstate.Reconnected)
	select {
	case <-m.Done():
		t.Fatalf("hold ended: %v", m.Err())
	default:
	}
	if err := m.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// A waiter survives Suspended → Reconnected on the same session and keeps its
// place (its node).
func TestWaiterKeepsPlaceAcrossSuspend(t *testing.T) {
	srv := server(t)
	ns := namespace(t)
	observer := connect(t, srv.ConnectString(), ns)
	proxy := zktest.NewProxy(t, srv.ConnectString())
	c := connect(t, proxy.Addr(), ns)
	ctx := ctxT(t)
	holder := mutex.New(observer, lockPath)
	if err := holder.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	m := mutex.New(c, lockPath)
	done := make(chan error, 1)
	go func() { done <- m.Acquire(ctx) }()
	eventually(t, "waiter queued", func() bool { return len(children(t, observer, lockPath)) == 2 })
	before, _ := holder.Participants(ctx)
	proxy.Cut()
	waitState(t, c, connstate.Suspended)
	proxy.Restore()
	waitState(t, c, connstate.Reconnected)
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if m.Node() != before[1] {
		t.Fatalf("waiter's node changed from %s to %s", before[1], m.Node())
	}
	if err := m.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// The hold is never granted on a node that is gone: deleted by an operator
// while waiting (the watched predecessor then goes too), or lost with the
// session.
func TestNeverGrantsAGoneNode(t *testing.T) {
	srv := server(t)
	ns := namespace(t)
	c1 := connect(t, srv.ConnectString(), ns)
	c2 := connect(t, srv.ConnectString(), ns)
	ctx := ctxT(t)
	holder, waiter := mutex.New(c1, lockPath), mutex.New(c2, lockPath)
	if err := holder.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- waiter.Acquire(ctx) }()
	eventually(t, "waiter queued", func() bool { return len(children(t, c1, lockPath)) == 2 })
	ps, _ := holder.Participants(ctx)
	// The operator deletes the waiter's node, then the holder releases.
	if err := c1.Delete(ctx, ps[1]); err != nil {
		t.Fatal(err)
	}
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if waiter.Node() == ps[1] {
		t.Fatal("granted the deleted node")
	}
	_, stat, err := c1.Get(ctx, waiter.Node())
	if err != nil || stat.EphemeralOwner != c2.SessionID() {
		t.Fatalf("held node %s: %v (owner %x, session %x)", waiter.Node(), err, stat, c2.SessionID())
	}
	if err := waiter.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestNeverGrantsANodeOfALostSession(t *testing.T) {
	srv := server(t)
	ns := namespace(t)
	holderClient := connect(t, srv.ConnectString(), ns)
	proxy := zktest.NewProxy(t, srv.ConnectString())
	c := connect(t, proxy.Addr(), ns, framework.WithSessionTimeout(1500*time.Millisecond))
	ctx := ctxT(t)
	holder, waiter := mutex.New(holderClient, lockPath), mutex.New(c, lockPath)
	if err := holder.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- waiter.Acquire(ctx) }()
	eventually(t, "waiter queued", func() bool { return len(children(t, holderClient, lockPath)) == 2 })
	ps, _ := holder.Participants(ctx)
	proxy.Cut()
	waitState(t, c, connstate.Lost)
	// The server expires the waiter's session too; the holder releases.
	eventually(t, "server expired the waiter", func() bool { return len(children(t, holderClient, lockPath)) == 1 })
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	proxy.Restore()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if waiter.Node() == ps[1] {
		t.Fatal("granted the node of the lost session")
	}
	_, stat, err := holderClient.Get(ctx, waiter.Node())
	if err != nil || stat.EphemeralOwner != c.SessionID() {
		t.Fatalf("held node %s: %v", waiter.Node(), err)
	}
	if err := waiter.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// After 1,000 contended cycles the server holds no watch when idle; with
// waiters it holds at most three per waiter (the node ahead, the one before
// it, its own) and the first waiter two (no node before the holder), and a
// release wakes one waiter.
func TestWatchesPerWaiterBounded(t *testing.T) {
	srv := server(t)
	ns := namespace(t)
	const handles, cycles = 4, 1000
	clients := make([]*framework.Client, handles)
	for i := range clients {
		clients[i] = connect(t, srv.ConnectString(), ns)
	}
	var wg sync.WaitGroup
	var count atomic.Int32
	errc := make(chan error, handles)
	for i := 0; i < handles; i++ {
		m := mutex.New(clients[i], lockPath)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for count.Add(1) <= cycles {
				if err := m.Acquire(context.Background()); err != nil {
					errc <- err
					return
				}
				if err := m.Release(context.Background()); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	eventually(t, "no watches when idle", func() bool { n, err := srv.WatchCount(); return err == nil && n == 0 })

	ctx := ctxT(t)
	holder := mutex.New(clients[0], lockPath)
	if err := holder.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	type waiter struct {
		m    *mutex.Mutex
		done chan error
	}
	var waiters []waiter
	for i := 1; i < handles; i++ {
		w := waiter{mutex.New(clients[i], lockPath), make(chan error, 1)}
		go func() { w.done <- w.m.Acquire(ctx) }()
		waiters = append(waiters, w)
		eventually(t, "waiter queued", func() bool { return len(children(t, clients[0], lockPath)) == i+1 })
	}
	want := 3*len(waiters) - 1
	eventually(t, "bounded watches per waiter", func() bool { n, err := srv.WatchCount(); return err == nil && n == want })
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// Exactly one waiter wakes: the first; the others keep their watches.
	if err := <-waiters[0].done; err != nil {
		t.Fatal(err)
	}
	// The first waiter holds; the watch on its own node stays until the
	// node goes: 1. The second waiter's watch on the node before its
	// predecessor (the old holder) fired; it lists again and, the new
	// holder alone ahead of it, keeps 2. The others keep their 3.
	eventually(t, "watches of the remaining waiters", func() bool {
		n, err := srv.WatchCount()
		return err == nil && n == 1+2+3*(len(waiters)-2)
	})
	for _, w := range waiters[1:] {
		select {
		case err := <-w.done:
			t.Fatalf("a second waiter woke and returned %v", err)
		default:
		}
	}
	for i, w := range waiters {
		if i > 0 {
			if err := <-w.done; err != nil {
				t.Fatal(err)
			}
		}
		if err := w.m.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "no watches at the end", func() bool { n, err := srv.WatchCount(); return err == nil && n == 0 })
}

// A fenced write succeeds for the holder and is rejected by the server once
// the holder's node is gone.
func TestFencedWrite(t *testing.T) {
	srv := server(t)
	ns := namespace(t)
	c := connect(t, srv.ConnectString(), ns)
	operator := connect(t, srv.ConnectString(), ns)
	ctx := ctxT(t)
	if _, err := c.Create(ctx, "/resource", []byte("v0")); err != nil {
		t.Fatal(err)
	}
	m := mutex.New(c, lockPath)
	if _, err := m.FencedMulti(ctx, framework.SetOp("/resource", []byte("x"), -1)); !errors.Is(err, mutex.ErrNotHeld) {
		t.Fatalf("fenced write without the lock: %v", err)
	}
	if err := m.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := m.FencedMulti(ctx, framework.SetOp("/resource", []byte("v1"), -1)); err != nil {
		t.Fatal(err)
	}
	if err := operator.Delete(ctx, m.Node()); err != nil {
		t.Fatal(err)
	}
	_, err := m.FencedMulti(ctx, framework.SetOp("/resource", []byte("v2"), -1))
	if !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("fenced write after the node went: %v, want ErrNoNode", err)
	}
	if data, _, _ := c.Get(ctx, "/resource"); string(data) != "v1" {
		t.Fatalf("resource = %q, want v1", data)
	}
	_ = m.Release(ctx)
}

func TestRevocation(t *testing.T) {
	srv := server(t)
	ns := namespace(t)
	c := connect(t, srv.ConnectString(), ns)
	other := connect(t, srv.ConnectString(), ns)
	ctx := ctxT(t)
	revoked := make(chan *mutex.Mutex, 1)
	m := mutex.New(c, lockPath, mutex.Revocable(func(m *mutex.Mutex) { revoked <- m }))
	if err := m.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if data, _, _ := c.Get(ctx, m.Node()); len(data) != 0 {
		t.Fatalf("revocable node data %q, want empty", data)
	}
	ps, _ := mutex.New(other, lockPath).Participants(ctx)
	if err := mutex.Revoke(ctx, other, ps[0]); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-revoked:
		if got != m {
			t.Fatal("callback got another mutex")
		}
	case <-time.After(deadline):
		t.Fatal("revocation not delivered")
	}
	if err := m.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := mutex.Revoke(ctx, other, ps[0]); err != nil {
		t.Fatalf("revoking a gone node: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	srv := server(t)
	c := connect(t, srv.ConnectString(), namespace(t))
	ctx := ctxT(t)
	tests := []struct {
		name string
		m    *mutex.Mutex
		want error
	}{
		{"nil client", mutex.New(nil, lockPath), mutex.ErrNilClient},
		{"empty path", mutex.New(c, ""), mutex.ErrInvalidPath},
		{"relative path", mutex.New(c, "locks"), mutex.ErrInvalidPath},
		{"trailing slash", mutex.New(c, "/locks/"), mutex.ErrInvalidPath},
		{"dot segment", mutex.New(c, "/locks/../x"), mutex.ErrInvalidPath},
		{"NUL", mutex.New(c, "/lo\x00cks"), mutex.ErrInvalidPath},
		{"root", mutex.New(c, "/"), mutex.ErrInvalidPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.m.Acquire(ctx); !errors.Is(err, tt.want) {
				t.Errorf("Acquire = %v, want %v", err, tt.want)
			}
			if ok, err := tt.m.TryAcquire(ctx); ok || !errors.Is(err, tt.want) {
				t.Errorf("TryAcquire = %v, %v", ok, err)
			}
			if _, err := tt.m.Participants(ctx); !errors.Is(err, tt.want) {
				t.Errorf("Participants = %v", err)
			}
			if err := tt.m.Release(ctx); !errors.Is(err, mutex.ErrNotHeld) {
				t.Errorf("Release = %v, want ErrNotHeld", err)
			}
		})
	}
	m := mutex.New(c, lockPath)
	if err := m.Release(ctx); !errors.Is(err, mutex.ErrNotHeld) {
		t.Fatalf("release without acquire: %v", err)
	}
	if !errors.Is(m.Err(), mutex.ErrNotHeld) || m.IsHeld() || m.FencingToken() != 0 {
		t.Fatal("fresh handle claims a hold")
	}
	select {
	case <-m.Done():
	default:
		t.Fatal("Done of a fresh handle is not closed")
	}
	closed := connect(t, srv.ConnectString(), namespace(t))
	_ = closed.Close()
	if err := mutex.New(closed, lockPath).Acquire(ctx); !errors.Is(err, framework.ErrClosed) {
		t.Fatalf("closed client: %v", err)
	}
}

// Random mix of Acquire, TryAcquire and cancels: no node is ever left.
func TestMixedOperationsLeaveNothing(t *testing.T) {
	srv := server(t)
	ns := namespace(t)
	const clients = 3
	var wg sync.WaitGroup
	var holders atomic.Int32
	errc := make(chan error, clients)
	cs := make([]*framework.Client, clients)
	for i := range cs {
		cs[i] = connect(t, srv.ConnectString(), ns)
	}
	for i := 0; i < clients; i++ {
		m := mutex.New(cs[i], lockPath)
		rng := rand.New(rand.NewSource(int64(i)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 60; k++ {
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rng.Intn(20))*time.Millisecond)
				var err error
				ok := true
				if rng.Intn(2) == 0 {
					ok, err = m.TryAcquire(ctx)
				} else {
					err = m.Acquire(ctx)
				}
				cancel()
				if err != nil || !ok {
					if m.IsHeld() {
						errc <- errors.New("failed acquire left a hold")
						return
					}
					continue
				}
				if holders.Add(1) != 1 {
					errc <- errors.New("two holders")
				}
				holders.Add(-1)
				if err := m.Release(context.Background()); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	eventually(t, "no nodes left", func() bool { return len(children(t, cs[0], lockPath)) == 0 })
}

// A cancelled acquire leaves no node at the moment it returns, even when
// the cancel lands while its create is still in flight.
func TestCancelledAcquireLeavesNothingOnReturn(t *testing.T) {
	srv := server(t)
	ns := namespace(t)
	c1 := connect(t, srv.ConnectString(), ns)
	c2 := connect(t, srv.ConnectString(), ns)
	ctx := ctxT(t)
	holder := mutex.New(c1, lockPath)
	if err := holder.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	m := mutex.New(c2, lockPath)
	for i := 0; i < 150; i++ {
		actx, cancel := context.WithCancel(ctx)
		// Cancel at a spread of moments: before the create is sent, while
		// it is in flight, and while waiting.
		delay := time.Duration(i%15) * 100 * time.Microsecond
		timer := time.AfterFunc(delay, cancel)
		err := m.Acquire(actx)
		timer.Stop()
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("iteration %d: %v, want context.Canceled", i, err)
		}
		if got := children(t, c1, lockPath); len(got) != 1 {
			t.Fatalf("iteration %d (cancel after %v): nodes on return: %v", i, delay, got)
		}
	}
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
