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
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/locking"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/zktest"
)

const lockPath = "/locks/orders"

// 16 handles over 4 clients, 2,000 acquisitions: never two holders, checked
// in-process and by an ephemeral marker node; grants follow node order.
func TestNeverTwoHoldersAndFIFO(t *testing.T) {
	ns := testkit.Unique(t)
	const clients, perClient, total = 4, 4, 2000
	var (
		holders atomic.Int32
		grants  atomic.Int32
		mu      sync.Mutex
		order   []int32 // sequence numbers in grant order
	)
	var wg sync.WaitGroup
	for i := 0; i < clients; i++ {
		c := testkit.Connect(t, zkAddr, ns)
		for j := 0; j < perClient; j++ {
			m := mutex.New(c, lockPath)
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := context.Background()
				for grants.Load() < total {
					if err := m.Acquire(ctx); err != nil {
						t.Error(err)
						return
					}
					n := grants.Add(1)
					// Both pieces of evidence last the whole hold: the
					// in-process count until just before Release, the
					// marker node from just after Acquire until just
					// before Release, so the next holder's create of it
					// fails if the holds overlap.
					if h := holders.Add(1); h != 1 {
						t.Errorf("grant %d: %d holders in process", n, h)
					}
					if _, err := c.Create(ctx, "/marker", []byte{}, framework.WithMode(framework.Ephemeral)); err != nil {
						t.Errorf("grant %d: marker: %v", n, err)
					}
					seq, ok := locking.Sequence(m.Node(), "lock-")
					if !ok {
						t.Errorf("held node %q has no sequence number", m.Node())
					}
					mu.Lock()
					order = append(order, seq)
					mu.Unlock()
					if err := c.Delete(ctx, "/marker"); err != nil {
						t.Errorf("grant %d: delete marker: %v", n, err)
					}
					holders.Add(-1)
					if err := m.Release(ctx); err != nil {
						t.Error(err)
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
	if t.Failed() {
		t.FailNow()
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
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	ctx := testkit.Ctx(t)
	m := mutex.New(c, lockPath)
	for i := 0; i < 3; i++ {
		if err := m.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := testkit.Children(t, c, lockPath); len(got) != 1 {
		t.Fatalf("3 acquires made %d nodes: %v", len(got), got)
	}
	other := mutex.New(c, lockPath) // same client, other handle: excluded
	if ok, err := other.TryAcquire(ctx); ok || err != nil {
		t.Fatalf("second handle TryAcquire = %v, %v", ok, err)
	}
	if got := testkit.Children(t, c, lockPath); len(got) != 1 {
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
	if got := testkit.Children(t, c, lockPath); len(got) != 0 {
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
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	ctx := testkit.Ctx(t)
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
	if data, _, err := c.Get(ctx, custom.Node()); err != nil || string(data) != "worker-7" {
		t.Fatalf("WithData: node data %q, %v", data, err)
	}
	if err := custom.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestWaitersQueueAndHandOver(t *testing.T) {
	ns := testkit.Unique(t)
	c1 := testkit.Connect(t, zkAddr, ns)
	c2 := testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
	a, b := mutex.New(c1, lockPath), mutex.New(c2, lockPath)
	if err := a.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { got <- b.Acquire(ctx) }()
	// b has listed and set its watch on a's node: it decided to wait, so
	// a grant it had no right to would have been returned by now.
	testkit.AwaitWatch(t, zkAddr, c2, a.Node())
	ps, err := a.Participants(ctx)
	if err != nil || len(ps) != 2 || ps[0] != a.Node() {
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

// A fenced write succeeds for the holder and is rejected by the server once
// the holder's node is gone.
func TestFencedWrite(t *testing.T) {
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	operator := testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
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
	if data, _, err := c.Get(ctx, "/resource"); err != nil || string(data) != "v1" {
		t.Fatalf("resource = %q, %v; want v1", data, err)
	}
	_ = m.Release(ctx)
}

func TestRevocation(t *testing.T) {
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	other := testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
	revoked := make(chan *mutex.Mutex, 1)
	m := mutex.New(c, lockPath, mutex.Revocable(func(m *mutex.Mutex) { revoked <- m }))
	if err := m.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if data, _, err := c.Get(ctx, m.Node()); err != nil || len(data) != 0 {
		t.Fatalf("revocable node data %q, %v; want empty", data, err)
	}
	ps, err := mutex.New(other, lockPath).Participants(ctx)
	if err != nil || len(ps) != 1 || ps[0] != m.Node() {
		t.Fatalf("participants %v, %v; want the holder's node alone", ps, err)
	}
	if err := mutex.Revoke(ctx, other, ps[0]); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-revoked:
		if got != m {
			t.Fatal("callback got another mutex")
		}
	case <-time.After(testkit.Deadline):
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
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	ctx := testkit.Ctx(t)
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
	closed := testkit.Connect(t, zkAddr, testkit.Unique(t))
	_ = closed.Close()
	if err := mutex.New(closed, lockPath).Acquire(ctx); !errors.Is(err, framework.ErrClosed) {
		t.Fatalf("closed client: %v", err)
	}
}

// Random mix of Acquire, TryAcquire and cancels: no node is ever left.
func TestMixedOperationsLeaveNothing(t *testing.T) {
	ns := testkit.Unique(t)
	const clients = 3
	var wg sync.WaitGroup
	cs := make([]*framework.Client, clients)
	for i := range cs {
		cs[i] = testkit.Connect(t, zkAddr, ns)
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
						t.Error("failed acquire left a hold")
						return
					}
					continue
				}
				// The marker lasts the whole hold: another holder's
				// create of it fails while this hold lasts.
				if _, err := cs[i].Create(context.Background(), "/marker", nil, framework.WithMode(framework.Ephemeral)); err != nil {
					t.Errorf("two holders? marker: %v", err)
				}
				if err := cs[i].Delete(context.Background(), "/marker"); err != nil {
					t.Errorf("delete marker: %v", err)
				}
				if err := m.Release(context.Background()); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	testkit.Eventually(t, "no nodes left", func() bool { return len(testkit.Children(t, cs[0], lockPath)) == 0 })
}

// The handle's state after a failed acquire and after a lost hold (the
// loop's own behaviour in these cases is specified in recipes/locking): a
// failed acquire leaves the handle not held, with a closed Done; a hold
// lost to Suspended (StandardPolicy) reads as lost, has no token or node,
// answers Release with ErrLockLost, and the handle acquires again once the
// connection is back.
func TestHandleAfterFailedAcquireAndLoss(t *testing.T) {
	ns := testkit.Unique(t)
	observer := testkit.Connect(t, zkAddr, ns)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns)
	ctx := testkit.Ctx(t)
	holder := mutex.New(observer, lockPath)
	if err := holder.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	m := mutex.New(c, lockPath)
	dctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := m.Acquire(dctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquire with a deadline while held elsewhere: %v", err)
	}
	if m.IsHeld() || !errors.Is(m.Err(), mutex.ErrNotHeld) || m.FencingToken() != 0 || m.Node() != "" {
		t.Fatalf("failed acquire left the handle held: %v", m.Err())
	}
	testkit.WaitClosed(t, m.Done(), "Done of a handle whose acquire failed")
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}

	if err := m.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	proxy.Cut()
	testkit.WaitClosed(t, m.Done(), "Done on Suspended")
	if !errors.Is(m.Err(), mutex.ErrLockLost) || m.IsHeld() || m.FencingToken() != 0 || m.Node() != "" {
		t.Fatalf("after Suspended: err %v held %v token %d node %q", m.Err(), m.IsHeld(), m.FencingToken(), m.Node())
	}
	if err := m.Release(ctx); !errors.Is(err, mutex.ErrLockLost) {
		t.Fatalf("release after loss = %v, want ErrLockLost", err)
	}
	proxy.Restore()
	testkit.WaitState(t, c, connstate.Reconnected)
	if err := m.Acquire(ctx); err != nil { // the handle is usable again
		t.Fatal(err)
	}
	if err := m.Release(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "no nodes", func() bool { return len(testkit.Children(t, observer, lockPath)) == 0 })
}
