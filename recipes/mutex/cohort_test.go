package mutex_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/zktest"
)

// Local hand-over (lock cohorting), each case on one server.
func TestLocalHandover(t *testing.T) {
	addr := zkAddr
	t.Run("exclusion and tokens", func(t *testing.T) { testCohortExclusion(t, addr) })
	t.Run("fairness bound", func(t *testing.T) { testCohortFairness(t, addr) })
	t.Run("fairness bound, every process cohorted, RTT 0", func(t *testing.T) { testCohortFairnessAllCohorted(t, addr) })
	t.Run("token shared locally, greater across processes", func(t *testing.T) { testCohortTokens(t, addr) })
	t.Run("per-holder tokens", func(t *testing.T) { testCohortPerHolderTokens(t, addr) })
	t.Run("revocation releases the node", func(t *testing.T) { testCohortRevocation(t, addr) })
	t.Run("cancel while queued locally", func(t *testing.T) { testCohortCancel(t, addr) })
	t.Run("try acquire", func(t *testing.T) { testCohortTry(t, addr) })
	t.Run("reentrant", func(t *testing.T) { testCohortReentrant(t, addr) })
	t.Run("invalid options", func(t *testing.T) { testCohortInvalid(t, addr) })
	t.Run("close ends holder and waiters", func(t *testing.T) { testCohortClose(t, addr) })
	t.Run("loss ends holder and waiters", func(t *testing.T) { testCohortLoss(t, addr) })
}

type grant struct {
	client int
	token  int64
}

// 4 clients x 16 handles with local hand-over: never two holders, checked
// by an ephemeral marker node created behind a fenced check and deleted
// only at the end of the hold; tokens never go back; at most one node per
// client in the ZooKeeper queue; far fewer ZooKeeper holds than
// acquisitions; nothing left behind.
func testCohortExclusion(t *testing.T, addr string) {
	ns := testkit.Unique(t)
	const clients, perClient, total = 4, 16, 1200
	var (
		acquired atomic.Int32
		mu       sync.Mutex
		grants   []grant
		maxNodes atomic.Int32
		wg       sync.WaitGroup
	)
	observer := testkit.Connect(t, addr, ns)
	for i := 0; i < clients; i++ {
		c := testkit.Connect(t, addr, ns)
		for j := 0; j < perClient; j++ {
			m := mutex.New(c, lockPath, mutex.WithLocalHandover(16))
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := context.Background()
				for acquired.Load() < total {
					if err := m.Acquire(ctx); err != nil {
						t.Error(err)
						return
					}
					n := acquired.Add(1)
					// The marker must not exist when a holder makes it, and
					// only a holder whose node exists can make it.
					if _, err := m.FencedMulti(ctx, framework.CreateOp("/marker", nil, framework.Ephemeral)); err != nil {
						t.Errorf("acquisition %d: marker: %v", n, err)
					}
					mu.Lock()
					grants = append(grants, grant{client: i, token: m.FencingToken()})
					mu.Unlock()
					if n%50 == 0 {
						kids, _, err := observer.Children(ctx, lockPath)
						if err != nil {
							t.Error(err)
						}
						if k := int32(len(kids)); k > maxNodes.Load() {
							maxNodes.Store(k)
						}
					}
					if err := c.Delete(ctx, "/marker"); err != nil {
						t.Errorf("acquisition %d: delete marker: %v", n, err)
					}
					if err := m.Release(ctx); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	// Tokens: one run of equal tokens per ZooKeeper hold, runs in
	// increasing order, each run inside one client.
	runs := 0
	for i, g := range grants {
		if i == 0 || g.token != grants[i-1].token {
			runs++
			if i > 0 && g.token < grants[i-1].token {
				t.Fatalf("grant %d: token %d after %d", i, g.token, grants[i-1].token)
			}
			continue
		}
		if g.client != grants[i-1].client {
			t.Fatalf("grant %d: token %d shared by clients %d and %d", i, g.token, grants[i-1].client, g.client)
		}
	}
	if runs*2 > len(grants) {
		t.Errorf("%d ZooKeeper holds for %d acquisitions: local hand-over barely happened", runs, len(grants))
	}
	if k := maxNodes.Load(); k > clients {
		t.Errorf("%d nodes in the queue, want at most one per client (%d)", k, clients)
	}
	t.Logf("%d acquisitions, %d ZooKeeper holds, at most %d nodes queued", len(grants), runs, maxNodes.Load())
	testkit.Eventually(t, "no lock node left", func() bool { return len(testkit.Children(t, observer, lockPath)) == 0 })
}

// A handle of another process, once its node is queued, sees at most max+1
// holds of a cohorted process start before it holds: the node ahead of it
// (granted before or after it queued) hands over at most max times, and the
// cohort's next node queues behind it.
func testCohortFairness(t *testing.T, addr string) {
	ns := testkit.Unique(t)
	const max = 3
	a := testkit.Connect(t, addr, ns)
	b := testkit.Connect(t, addr, ns)
	var (
		counting atomic.Bool
		after    atomic.Int32
		stop     atomic.Bool
		wg       sync.WaitGroup
	)
	for i := 0; i < 4; i++ {
		m := mutex.New(a, lockPath, mutex.WithLocalHandover(max))
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			for !stop.Load() {
				if err := m.Acquire(ctx); err != nil {
					t.Error(err)
					return
				}
				if counting.Load() {
					after.Add(1)
				}
				time.Sleep(time.Millisecond) // a critical section
				if err := m.Release(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	testkit.Eventually(t, "the cohort holds", func() bool { return len(testkit.Children(t, b, lockPath)) >= 1 })
	other := mutex.New(b, lockPath)
	got := make(chan error, 1)
	go func() { got <- other.Acquire(testkit.Ctx(t)) }()
	// B's node is in the queue (the server says so) before counting starts.
	testkit.Eventually(t, "B queued", func() bool {
		for _, n := range testkit.Children(t, b, lockPath) {
			st, err := b.Exists(testkit.Ctx(t), lockPath+"/"+n)
			if err != nil {
				t.Fatal(err)
			}
			if st != nil && st.EphemeralOwner == b.SessionID() {
				return true
			}
		}
		return false
	})
	counting.Store(true)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	counting.Store(false)
	n := after.Load()
	if err := other.Release(testkit.Ctx(t)); err != nil {
		t.Fatal(err)
	}
	stop.Store(true)
	wg.Wait()
	if n > max+1 {
		t.Fatalf("%d holds of the cohort began while B waited, want at most max+1 = %d", n, max+1)
	}
	t.Logf("%d cohort holds began while B waited (bound %d)", n, max+1)
	testkit.Eventually(t, "no lock node left", func() bool { return len(testkit.Children(t, b, lockPath)) == 0 })
}

// 4 processes x 16 handles, every process cohorted with max 8, on
// loopback: while every process has waiters, no process holds more than
// max+1 = 9 times in a row. A cohort whose streak ends creates its next
// node before it deletes the old one, so it always has a place in the
// ZooKeeper queue behind the processes already waiting. (Deleting first
// left it out of the queue for the delete's round trip, and on loopback
// one process held 18 to 54 times in a row.) The order of holds is taken
// under the hold, so it is the order the lock was held in.
func testCohortFairnessAllCohorted(t *testing.T, addr string) {
	ns := testkit.Unique(t)
	const clients, perClient, max, total, warmup = 4, 16, 8, 1500, 100
	cs := make([]*framework.Client, clients)
	for i := range cs {
		cs[i] = testkit.Connect(t, addr, ns)
	}
	order := holdOrder(t, cs, perClient, max, total)
	longest, runs := longestRun(order, warmup, total)
	if longest > max+1 {
		t.Errorf("one process held %d times in a row, want at most max+1 = %d", longest, max+1)
	}
	t.Logf("%d holds after the warm-up, %d runs, longest run %d (bound %d)", total-warmup, runs, longest, max+1)
	obs := testkit.Connect(t, addr, ns)
	testkit.Eventually(t, "no lock node left", func() bool { return len(testkit.Children(t, obs, lockPath)) == 0 })
}

// holdOrder has perClient cohorted handles (WithLocalHandover(max)) on
// each client take the lock until total holds, and returns the client of
// each hold in hold order. Exclusion evidence is kept for the whole hold:
// a marker node that exists only while one holder holds.
func holdOrder(t *testing.T, cs []*framework.Client, perClient, max, total int) []int {
	t.Helper()
	const marker = "/marker"
	var (
		mu    sync.Mutex
		order []int
		stop  atomic.Bool
		start = make(chan struct{})
		wg    sync.WaitGroup
	)
	for i, c := range cs {
		for j := 0; j < perClient; j++ {
			m := mutex.New(c, lockPath, mutex.WithLocalHandover(max))
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := context.Background()
				<-start
				for !stop.Load() {
					if err := m.Acquire(ctx); err != nil {
						t.Error(err)
						return
					}
					if _, err := m.FencedMulti(ctx, framework.CreateOp(marker, nil, framework.Ephemeral)); err != nil {
						t.Errorf("marker: %v", err)
					}
					mu.Lock()
					order = append(order, i)
					if len(order) >= total {
						stop.Store(true)
					}
					mu.Unlock()
					if err := c.Delete(ctx, marker); err != nil {
						t.Errorf("delete marker: %v", err)
					}
					if err := m.Release(ctx); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	close(start)
	wg.Wait()
	return order
}

// longestRun returns the longest run of holds by one client in order and
// the number of runs, counted from after the warm-up (the first nodes are
// made as the clients start) to total (after it handles stop, and a
// process may be alone).
func longestRun(order []int, warmup, total int) (longest, runs int) {
	for i, run := warmup, 0; i < total && i < len(order); i++ {
		if i > warmup && order[i] == order[i-1] {
			run++
		} else {
			run = 1
			runs++
		}
		longest = maxInt(longest, run)
	}
	return longest, runs
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// A local successor has its predecessor's token and node; a holder in
// another process after them has a greater token, and the old holders'
// fenced writes are rejected.
func testCohortTokens(t *testing.T, addr string) {
	ns := testkit.Unique(t)
	a := testkit.Connect(t, addr, ns)
	b := testkit.Connect(t, addr, ns)
	ctx := testkit.Ctx(t)
	h1 := mutex.New(a, lockPath, mutex.WithLocalHandover(4))
	h2 := mutex.New(a, lockPath, mutex.WithLocalHandover(4))
	if err := h1.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	tok, node := h1.FencingToken(), h1.Node()
	check, err := h1.CheckOp()
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan error, 1)
	go func() { waiting <- h2.Acquire(ctx) }()
	testkit.Eventually(t, "h2 queued locally", func() bool { return cohortQueued(h2) })
	if err := h1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-waiting; err != nil {
		t.Fatal(err)
	}
	if h2.FencingToken() != tok || h2.Node() != node {
		t.Fatalf("local successor: token %d node %s, want %d %s", h2.FencingToken(), h2.Node(), tok, node)
	}
	if h1.IsHeld() || h1.Err() == nil {
		t.Fatalf("h1 after its release: held %v, err %v", h1.IsHeld(), h1.Err())
	}
	other := mutex.New(b, lockPath)
	got := make(chan error, 1)
	go func() { got <- other.Acquire(ctx) }()
	testkit.Eventually(t, "B queued", func() bool { return len(testkit.Children(t, b, lockPath)) == 2 })
	if err := h2.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if other.FencingToken() <= tok {
		t.Fatalf("holder in another process: token %d, want > %d", other.FencingToken(), tok)
	}
	// The old holders' check fails now.
	if _, err := a.Multi(ctx, check, framework.CreateOp("/stale", nil, framework.Persistent)); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("fenced write of an earlier holder: %v, want zk.ErrNoNode", err)
	}
	if err := other.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// cohortQueued reports whether a handle waits in m's local queue.
func cohortQueued(m *mutex.Mutex) bool { return m.LocalWaiters() > 0 }

// A handle that gives up while queued locally leaves the local queue; the
// node stays while another local waiter wants it and goes with the last.
func testCohortCancel(t *testing.T, addr string) {
	ns := testkit.Unique(t)
	a := testkit.Connect(t, addr, ns)
	b := testkit.Connect(t, addr, ns)
	ctx := testkit.Ctx(t)
	holder := mutex.New(b, lockPath)
	if err := holder.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	h1 := mutex.New(a, lockPath, mutex.WithLocalHandover(4))
	h2 := mutex.New(a, lockPath, mutex.WithLocalHandover(4))
	ctx1, cancel1 := context.WithCancel(ctx)
	ctx2, cancel2 := context.WithCancel(ctx)
	defer cancel2()
	r1, r2 := make(chan error, 1), make(chan error, 1)
	go func() { r1 <- h1.Acquire(ctx1) }()
	go func() { r2 <- h2.Acquire(ctx2) }()
	var before []string
	testkit.Eventually(t, "one node for the two local waiters", func() bool {
		before = testkit.Children(t, b, lockPath)
		return len(before) == 2 && h2.LocalWaiters() == 2
	})
	cancel1()
	if err := <-r1; !errors.Is(err, context.Canceled) {
		t.Fatalf("h1: %v, want context.Canceled", err)
	}
	// The cohort's node still waits for h2: the same two nodes (a failed
	// acquire deletes a node before it returns), and h2 still queued.
	if after := testkit.Children(t, b, lockPath); fmt.Sprint(after) != fmt.Sprint(before) || h2.LocalWaiters() != 1 {
		t.Fatalf("after the first local waiter left: nodes %v (before %v), %d local waiters; want the same nodes and 1", after, before, h2.LocalWaiters())
	}
	cancel2()
	if err := <-r2; !errors.Is(err, context.Canceled) {
		t.Fatalf("h2: %v, want context.Canceled", err)
	}
	testkit.Eventually(t, "the cohort's node gone with its last waiter", func() bool { return len(testkit.Children(t, b, lockPath)) == 1 })
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// And the handles still work.
	if err := h1.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "no lock node left", func() bool { return len(testkit.Children(t, b, lockPath)) == 0 })
}

// TryAcquire never waits: false when another process holds or a local
// handle holds or waits, with no node left; true when the lock is free.
func testCohortTry(t *testing.T, addr string) {
	ns := testkit.Unique(t)
	a := testkit.Connect(t, addr, ns)
	b := testkit.Connect(t, addr, ns)
	ctx := testkit.Ctx(t)
	holder := mutex.New(b, lockPath)
	if err := holder.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	h1 := mutex.New(a, lockPath, mutex.WithLocalHandover(4))
	h2 := mutex.New(a, lockPath, mutex.WithLocalHandover(4))
	if ok, err := h1.TryAcquire(ctx); ok || err != nil {
		t.Fatalf("TryAcquire while another process holds: %v, %v", ok, err)
	}
	if n := len(testkit.Children(t, b, lockPath)); n != 1 {
		t.Fatalf("%d nodes after a failed TryAcquire, want 1", n)
	}
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := h1.TryAcquire(ctx); !ok || err != nil {
		t.Fatalf("TryAcquire of a free lock: %v, %v", ok, err)
	}
	if ok, err := h2.TryAcquire(ctx); ok || err != nil {
		t.Fatalf("TryAcquire while a local handle holds: %v, %v", ok, err)
	}
	if err := h1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := h2.TryAcquire(ctx); !ok || err != nil {
		t.Fatalf("TryAcquire after the local holder released: %v, %v", ok, err)
	}
	if err := h2.Release(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "no lock node left", func() bool { return len(testkit.Children(t, b, lockPath)) == 0 })
}

// Reentrancy is per handle: a second Acquire of the holder counts; another
// local handle waits until the last Release, then holds with no new node.
func testCohortReentrant(t *testing.T, addr string) {
	ns := testkit.Unique(t)
	a := testkit.Connect(t, addr, ns)
	ctx := testkit.Ctx(t)
	h1 := mutex.New(a, lockPath, mutex.WithLocalHandover(4))
	h2 := mutex.New(a, lockPath, mutex.WithLocalHandover(4))
	for i := 0; i < 2; i++ {
		if err := h1.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	node := h1.Node()
	got := make(chan error, 1)
	go func() { got <- h2.Acquire(ctx) }()
	testkit.Eventually(t, "h2 queued locally", func() bool { return cohortQueued(h2) })
	if err := h1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// A hand-over takes the waiter off the local queue within Release:
	// h2 still queued is the evidence that it was not handed the hold.
	if !h1.IsHeld() || h2.IsHeld() || h2.LocalWaiters() != 1 {
		t.Fatalf("after one of two releases: h1 held %v, h2 held %v, %d local waiters", h1.IsHeld(), h2.IsHeld(), h2.LocalWaiters())
	}
	if err := h1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if h2.Node() != node && len(testkit.Children(t, a, lockPath)) != 1 {
		t.Fatalf("h2 holds %s, want %s or a fresh node alone", h2.Node(), node)
	}
	if err := h2.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h2.Release(ctx); !errors.Is(err, mutex.ErrNotHeld) {
		t.Fatalf("second Release: %v, want ErrNotHeld", err)
	}
	testkit.Eventually(t, "no lock node left", func() bool { return len(testkit.Children(t, a, lockPath)) == 0 })
}

func testCohortInvalid(t *testing.T, addr string) {
	a := testkit.Connect(t, addr, testkit.Unique(t))
	for _, max := range []int{0, -1} {
		m := mutex.New(a, lockPath, mutex.WithLocalHandover(max))
		if err := m.Acquire(testkit.Ctx(t)); !errors.Is(err, framework.ErrInvalidOption) {
			t.Errorf("WithLocalHandover(%d): Acquire: %v, want ErrInvalidOption", max, err)
		}
	}
	// An option that another would undo is refused, not dropped: a
	// revocable mutex's nodes carry empty data.
	m := mutex.New(a, lockPath, mutex.Revocable(func(*mutex.Mutex) {}), mutex.WithData([]byte("x")))
	if err := m.Acquire(testkit.Ctx(t)); !errors.Is(err, framework.ErrInvalidOption) {
		t.Errorf("Revocable with WithData: Acquire: %v, want ErrInvalidOption", err)
	}
}

// The client's Close ends the local holder's hold and fails its local
// waiters with framework.ErrClosed.
func testCohortClose(t *testing.T, addr string) {
	ns := testkit.Unique(t)
	a, err := framework.Connect(testkit.Ctx(t), addr, framework.WithNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	b := testkit.Connect(t, addr, ns)
	ctx := testkit.Ctx(t)
	h1 := mutex.New(a, lockPath, mutex.WithLocalHandover(4))
	h2 := mutex.New(a, lockPath, mutex.WithLocalHandover(4))
	if err := h1.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { got <- h2.Acquire(ctx) }()
	testkit.Eventually(t, "h2 queued locally", func() bool { return cohortQueued(h2) })
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitClosed(t, h1.Done(), "h1's Done after Close")
	if err := h1.Err(); !errors.Is(err, framework.ErrClosed) {
		t.Fatalf("h1.Err: %v, want ErrClosed", err)
	}
	if err := <-got; !errors.Is(err, framework.ErrClosed) {
		t.Fatalf("h2.Acquire: %v, want ErrClosed", err)
	}
	testkit.Eventually(t, "no lock node left", func() bool { return len(testkit.Children(t, b, lockPath)) == 0 })
}

// A connection cut mid-hold: the local holder's Done closes with
// ErrLockLost, its local waiters fail with ErrLockLost, and once the
// connection is back nothing is left behind.
func testCohortLoss(t *testing.T, addr string) {
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, addr)
	a := testkit.Connect(t, proxy.Addr(), ns, framework.WithSessionTimeout(4*time.Second))
	b := testkit.Connect(t, addr, ns)
	ctx := testkit.Ctx(t)
	h1 := mutex.New(a, lockPath, mutex.WithLocalHandover(4))
	waiters := make([]*mutex.Mutex, 3)
	got := make(chan error, len(waiters))
	if err := h1.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range waiters {
		waiters[i] = mutex.New(a, lockPath, mutex.WithLocalHandover(4))
		go func() { got <- waiters[i].Acquire(ctx) }()
	}
	testkit.Eventually(t, "waiters queued locally", func() bool { return waiters[0].LocalWaiters() == len(waiters) })
	proxy.Cut()
	testkit.WaitClosed(t, h1.Done(), "the local holder's Done after the cut")
	if err := h1.Err(); !errors.Is(err, mutex.ErrLockLost) {
		t.Fatalf("h1.Err: %v, want ErrLockLost", err)
	}
	for range waiters {
		if err := <-got; !errors.Is(err, mutex.ErrLockLost) {
			t.Fatalf("local waiter: %v, want ErrLockLost", err)
		}
	}
	proxy.Restore()
	testkit.Eventually(t, "no lock node left", func() bool { return len(testkit.Children(t, b, lockPath)) == 0 })
	// The handles work again once the connection is back.
	if err := waiters[0].Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if err := waiters[0].Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// A cohort is one ordinary participant to Apache Curator: a Java
// InterProcessMutex contending with 8 local-hand-over handles of one Go
// client sees at most two nodes (its own and the cohort's), gets the lock
// in its turn again and again, and never while a Go handle holds (every
// holder keeps one marker node for its whole hold, a client of the test's
// own for Java's: the other side's create of it fails while it lasts).
func TestLocalHandoverInteropWithCurator(t *testing.T) {
	java := curatorjava.StartDriver(t, zkAddr)
	c := testkit.Connect(t, zkAddr, "")
	witness := testkit.Connect(t, zkAddr, "") // marks Java's holds
	ctx := testkit.Ctx(t)
	path := "/interop/" + testkit.Unique(t)
	marker := path + "-marker" // outside the lock's directory
	java.MustDo("mutex j " + path)
	var (
		stop atomic.Bool
		wg   sync.WaitGroup
	)
	for i := 0; i < 8; i++ {
		m := mutex.New(c, path, mutex.WithLocalHandover(4))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if err := m.Acquire(ctx); err != nil {
					t.Error(err)
					return
				}
				if _, err := m.FencedMulti(ctx, framework.CreateOp(marker, nil, framework.Ephemeral)); err != nil {
					t.Errorf("marker: %v", err)
				}
				if err := c.Delete(ctx, marker); err != nil {
					t.Error(err)
				}
				if err := m.Release(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	testkit.Eventually(t, "the cohort holds", func() bool { return len(testkit.Children(t, c, path)) >= 1 })
	for round := 0; round < 10; round++ {
		if got := java.MustDo("acquire j 20000"); got != "true" {
			t.Fatalf("round %d: Java acquire: %s", round, got)
		}
		if _, err := witness.Create(ctx, marker, nil, framework.WithMode(framework.Ephemeral)); err != nil {
			t.Fatalf("round %d: marker of Java's hold: %v (a Go holder's still there?)", round, err)
		}
		if n := len(strings.Split(java.MustDo("participants j"), ",")); n > 2 {
			t.Fatalf("round %d: Curator sees %d participants, want at most 2 (one per process)", round, n)
		}
		if err := witness.Delete(ctx, marker); err != nil {
			t.Fatal(err)
		}
		java.MustDo("release j")
	}
	stop.Store(true)
	wg.Wait()
	testkit.Eventually(t, "no lock node left", func() bool { return len(testkit.Children(t, c, path)) == 0 })
}

// With WithPerHolderTokens every local holder has a token of its own:
// greater than its predecessor's (local or not), and the server rejects an
// earlier local holder's fenced write.
func testCohortPerHolderTokens(t *testing.T, addr string) {
	ns := testkit.Unique(t)
	a := testkit.Connect(t, addr, ns)
	b := testkit.Connect(t, addr, ns)
	ctx := testkit.Ctx(t)
	opts := []mutex.Option{mutex.WithLocalHandover(4), mutex.WithPerHolderTokens()}
	h1, h2 := mutex.New(a, lockPath, opts...), mutex.New(a, lockPath, opts...)
	if err := h1.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	t1, node := h1.FencingToken(), h1.Node()
	check1, err := h1.CheckOp()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h1.FencedMulti(ctx, framework.CreateOp("/first", nil, framework.Persistent)); err != nil {
		t.Fatalf("first holder's fenced write: %v", err)
	}
	waiting := make(chan error, 1)
	go func() { waiting <- h2.Acquire(ctx) }()
	testkit.Eventually(t, "h2 queued locally", func() bool { return cohortQueued(h2) })
	if err := h1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-waiting; err != nil {
		t.Fatal(err)
	}
	t2 := h2.FencingToken()
	if h2.Node() != node || t2 <= t1 {
		t.Fatalf("local successor: node %s token %d, want node %s and a token > %d", h2.Node(), t2, node, t1)
	}
	if _, err := a.Multi(ctx, check1, framework.CreateOp("/stale", nil, framework.Persistent)); !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("fenced write of the earlier local holder: %v, want zk.ErrBadVersion", err)
	}
	if _, err := h2.FencedMulti(ctx, framework.CreateOp("/second", nil, framework.Persistent)); err != nil {
		t.Fatalf("successor's fenced write: %v", err)
	}
	other := mutex.New(b, lockPath)
	got := make(chan error, 1)
	go func() { got <- other.Acquire(ctx) }()
	testkit.Eventually(t, "B queued", func() bool { return len(testkit.Children(t, b, lockPath)) == 2 })
	if err := h2.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if other.FencingToken() <= t2 {
		t.Fatalf("holder in another process: token %d, want > %d", other.FencingToken(), t2)
	}
	if err := other.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// A revocation asks for the lock, not for the next local holder to get it:
// the revoked holder's release deletes the node although a local handle
// waits, so the revoker's waiter in another process, queued before the
// cohort's next node, holds next.
func testCohortRevocation(t *testing.T, addr string) {
	ns := testkit.Unique(t)
	a := testkit.Connect(t, addr, ns)
	b := testkit.Connect(t, addr, ns)
	ctx := testkit.Ctx(t)
	release := func(m *mutex.Mutex) {
		if err := m.Release(ctx); err != nil {
			t.Errorf("release on revocation: %v", err)
		}
	}
	h1 := mutex.New(a, lockPath, mutex.WithLocalHandover(4), mutex.Revocable(release))
	h2 := mutex.New(a, lockPath, mutex.WithLocalHandover(4), mutex.Revocable(release))
	if err := h1.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	node := h1.Node()
	local := make(chan error, 1)
	go func() { local <- h2.Acquire(ctx) }()
	testkit.Eventually(t, "h2 queued locally", func() bool { return cohortQueued(h2) })
	other := mutex.New(b, lockPath)
	got := make(chan error, 1)
	go func() { got <- other.Acquire(ctx) }()
	testkit.Eventually(t, "B queued", func() bool { return len(testkit.Children(t, b, lockPath)) == 2 })
	if err := mutex.Revoke(ctx, b, node); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("B after the revocation: %v", err)
	}
	if h2.IsHeld() {
		t.Fatal("the local waiter holds beside B")
	}
	if err := other.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-local; err != nil {
		t.Fatal(err)
	}
	if h2.Node() == node {
		t.Fatalf("h2 holds the revoked node %s", node)
	}
	if err := h2.Release(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "no lock node left", func() bool { return len(testkit.Children(t, b, lockPath)) == 0 })
}
