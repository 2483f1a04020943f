package queue_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	stdatomic "sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/queue"
	"github.com/gocurator/curator/zktest"
)

// CURATOR-623: Curator's consumers stop for good after a disconnect
// longer than the session (the children watch went with the session).
// Ours read the queue again on the new session and consume what was put
// meanwhile and after, in both modes.
func TestCurator623ConsumesAfterSessionExpiry(t *testing.T) {
	t.Parallel()
	for _, m := range lockModes("/locks") {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			ns := testkit.Unique(t)
			ctx := testkit.Ctx(t)
			proxy := zktest.NewProxy(t, zkAddr)
			p := testkit.Connect(t, zkAddr, ns)
			cw := testkit.Connect(t, proxy.Addr(), ns, framework.WithSessionTimeout(time.Second))
			producer := goQueue(p, "/q", m.lock)
			k := consume(t, goQueue(cw, "/q", m.lock), nil)
			if err := producer.Put(ctx, []byte("before")); err != nil {
				t.Fatal(err)
			}
			if got := string(k.next(t).Data); got != "before" {
				t.Fatal(got)
			}
			first := cw.SessionID()
			proxy.BlackHole()
			testkit.WaitState(t, cw, connstate.Lost)
			if err := producer.Put(ctx, []byte("during")); err != nil {
				t.Fatal(err)
			}
			proxy.Restore()
			if got := string(k.next(t).Data); got != "during" {
				t.Fatalf("after the expiry consumed %q", got)
			}
			if cw.SessionID() == first {
				t.Fatal("the session did not expire: the test proves nothing")
			}
			if err := producer.Put(ctx, []byte("after")); err != nil {
				t.Fatal(err)
			}
			if got := string(k.next(t).Data); got != "after" {
				t.Fatalf("on the new session consumed %q", got)
			}
			testkit.Eventually(t, "the queue emptied", func() bool { return len(testkit.Children(t, p, "/q")) == 0 })
		})
	}
}

// CURATOR-336: Curator never tells its consumers of connection states.
// Ours hear them in order (WithConnectionStates), take nothing while cut
// off, and take what was put meanwhile once reconnected.
func TestCurator336ConsumerHearsStates(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	proxy := zktest.NewProxy(t, zkAddr)
	p := testkit.Connect(t, zkAddr, ns)
	cw := testkit.Connect(t, proxy.Addr(), ns)
	var mu sync.Mutex
	var states []connstate.State
	heard := make(chan struct{}, 10)
	q := queue.New(cw, "/q", queue.WithLockPath("/locks"), queue.WithConnectionStates(func(s connstate.State) {
		mu.Lock()
		states = append(states, s)
		mu.Unlock()
		heard <- struct{}{}
	}))
	k := consume(t, q, nil)
	if err := queue.New(p, "/q").Put(ctx, []byte("one")); err != nil {
		t.Fatal(err)
	}
	k.next(t)
	testkit.Eventually(t, "the item removed", func() bool {
		return len(testkit.Children(t, p, "/q")) == 0 && len(testkit.Children(t, p, "/locks")) == 0
	})
	proxy.Cut()
	testkit.WaitState(t, cw, connstate.Suspended)
	if err := queue.New(p, "/q").Put(ctx, []byte("two")); err != nil {
		t.Fatal(err)
	}
	select {
	case it := <-k.items:
		t.Fatalf("a suspended consumer took %q", it.Data)
	default:
	}
	if n := len(testkit.Children(t, p, "/locks")); n != 0 {
		t.Fatalf("a suspended consumer holds %d locks", n)
	}
	proxy.Restore()
	if got := string(k.next(t).Data); got != "two" {
		t.Fatal(got)
	}
	testkit.Eventually(t, "Suspended and Reconnected heard", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(states, connstate.Reconnected)
	})
	mu.Lock()
	defer mu.Unlock()
	if i := slices.Index(states, connstate.Suspended); i < 0 || i > slices.Index(states, connstate.Reconnected) {
		t.Fatalf("states heard: %v", states)
	}
}

// Stuck items (measured on Curator 5.4: an item whose lock-mode consumer
// died stays until the next put changes the queue, for ever on a quiet
// queue): the consumer that passed the item by takes it as soon as the
// dead consumer's lock node goes, with nothing else put.
func TestOrphanedItemTakenWhenItsLockGoes(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	ca := testkit.Connect(t, zkAddr, ns)
	cb := testkit.Connect(t, zkAddr, ns)
	obs := testkit.Connect(t, zkAddr, ns)
	if err := queue.New(obs, "/q").Put(ctx, []byte("orphan")); err != nil {
		t.Fatal(err)
	}
	ka := consume(t, queue.New(ca, "/q", queue.WithLockPath("/locks")), func(ctx context.Context, _ queue.Item) error {
		<-ctx.Done() // dies with its item
		return ctx.Err()
	})
	held := ka.next(t)
	qb := queue.New(cb, "/q", queue.WithLockPath("/locks"))
	passed := make(chan string, 10)
	queue.OnPass(qb, func(name string) { passed <- name })
	kb := consume(t, qb, nil)
	select {
	case n := <-passed:
		if n != held.Name {
			t.Fatalf("passed %s by, want %s", n, held.Name)
		}
	case <-time.After(testkit.Deadline):
		t.Fatal("the second consumer never looked at the held item")
	}
	if err := ca.Close(); err != nil { // its session, and lock node, end
		t.Fatal(err)
	}
	if it := kb.next(t); it.Name != held.Name {
		t.Fatalf("took %s, want the orphan %s", it.Name, held.Name)
	}
	testkit.Eventually(t, "the queue emptied", func() bool { return len(testkit.Children(t, obs, "/q")) == 0 })
}

// CURATOR-605: a consumer whose session dies mid-item is told (Item.Done,
// ErrItemLost), and its fenced write (Item.CheckOp in its transaction)
// fails once the next consumer has taken the item; the next consumer's
// lands. Curator gives the first consumer nothing to fence with.
func TestCurator605FencedConsumption(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	proxy := zktest.NewProxy(t, zkAddr)
	ca := testkit.Connect(t, proxy.Addr(), ns, framework.WithSessionTimeout(time.Second))
	cb := testkit.Connect(t, zkAddr, ns)
	if err := queue.New(cb, "/q").Put(ctx, []byte("job")); err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		itemErr, writeErr error
	}
	done := make(chan outcome, 1)
	resume := make(chan struct{})
	var told, writing stdatomic.Bool // where the first consumer is, for a failure's message
	ka := consume(t, queue.New(ca, "/q", queue.WithLockPath("/locks")), func(ctx context.Context, it queue.Item) error {
		if !it.Fenced() {
			t.Error("a lock-mode item is not fenced")
		}
		<-it.Done()
		told.Store(true)
		itemErr := it.Err()
		<-resume // the first consumer writes late, as a paused process would
		writing.Store(true)
		_, err := ca.Multi(context.WithoutCancel(ctx), it.CheckOp(), framework.CreateOp("/result-a", nil, framework.Persistent))
		done <- outcome{itemErr, err}
		return err
	})
	ka.next(t) // its function runs: the lock is taken, and known taken
	proxy.BlackHole()
	kb := consume(t, queue.New(cb, "/q", queue.WithLockPath("/locks")), func(ctx context.Context, it queue.Item) error {
		_, err := cb.Multi(ctx, append([]framework.Op{framework.CreateOp("/result-b", nil, framework.Persistent)}, it.RemoveOps()...)...)
		return err
	})
	kb.next(t)
	testkit.Eventually(t, "the second consumer's work and removal landed", func() bool {
		st, err := cb.Exists(ctx, "/result-b")
		return err == nil && st != nil && len(testkit.Children(t, cb, "/q")) == 0
	})
	proxy.Restore()
	close(resume)
	var o outcome
	select {
	case o = <-done:
	case <-time.After(testkit.Deadline):
		t.Fatalf("the first consumer never wrote: told of the loss %v, writing %v; its client %v, session 0x%x",
			told.Load(), writing.Load(), ca.State(), ca.SessionID())
	}
	if !errors.Is(o.itemErr, queue.ErrItemLost) {
		t.Errorf("first consumer's Item.Err = %v, want ErrItemLost", o.itemErr)
	}
	if !errors.Is(o.writeErr, zk.ErrNoNode) && !errors.Is(o.writeErr, zk.ErrBadVersion) {
		t.Errorf("first consumer's fenced write = %v, want refused", o.writeErr)
	}
	if st, err := cb.Exists(ctx, "/result-a"); err != nil || st != nil {
		t.Fatalf("the fenced-out consumer's write landed: %v, %v", st, err)
	}
	if n := testkit.Children(t, cb, "/locks"); len(n) != 0 {
		t.Fatalf("lock nodes left: %v", n)
	}
}

// Close ends every Consume with ErrClosed and leaves no lock node and no
// watch; the item being consumed stays in the queue for the next consumer.
func TestCloseLeavesNothing(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, ns)
	q := queue.New(c, "/q", queue.WithLockPath("/locks"))
	if err := q.Put(ctx, []byte("x")); err != nil {
		t.Fatal(err)
	}
	taken := make(chan struct{})
	ended := make(chan error, 2)
	for range 2 {
		go func() {
			ended <- q.Consume(ctx, func(ctx context.Context, _ queue.Item) error {
				close(taken)
				<-ctx.Done()
				return ctx.Err()
			})
		}()
	}
	<-taken
	if err := q.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-ended; !errors.Is(err, queue.ErrClosed) {
			t.Fatalf("Consume after Close = %v", err)
		}
	}
	if err := q.Put(ctx, []byte("y")); !errors.Is(err, queue.ErrClosed) {
		t.Fatalf("Put after Close = %v", err)
	}
	if n := testkit.Children(t, c, "/locks"); len(n) != 0 {
		t.Fatalf("lock nodes left: %v", n)
	}
	if n := testkit.Children(t, c, "/q"); len(n) != 1 {
		t.Fatalf("queue = %v, want the item back", n)
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, c)
}

// A lost reply to a consumer's transactions (the lock, the removal): the
// retry finds its own lock node and takes it up, or finds its removal
// applied; the item is consumed once and nothing is left or reported.
func TestLostTransactionReplies(t *testing.T) {
	t.Parallel()
	for _, which := range []string{"lock", "removal"} {
		t.Run(which, func(t *testing.T) {
			t.Parallel()
			ns := testkit.Unique(t)
			ctx := testkit.Ctx(t)
			proxy := zktest.NewProxy(t, zkAddr)
			p := testkit.Connect(t, zkAddr, ns)
			cw := testkit.Connect(t, proxy.Addr(), ns)
			sink, errs := errorSink()
			q := queue.New(cw, "/q", queue.WithLockPath("/locks"), sink)
			armed := make(chan (<-chan struct{}), 1)
			if which == "lock" {
				armed <- proxy.LoseNextMultiReply()
			}
			k := consume(t, q, func(context.Context, queue.Item) error {
				if which == "removal" {
					armed <- proxy.LoseNextMultiReply()
				}
				return nil
			})
			if err := queue.New(p, "/q").Put(ctx, []byte("x")); err != nil {
				t.Fatal(err)
			}
			if got := string(k.next(t).Data); got != "x" {
				t.Fatal(got)
			}
			testkit.Eventually(t, "queue and locks empty", func() bool {
				return len(testkit.Children(t, p, "/q")) == 0 && len(testkit.Children(t, p, "/locks")) == 0
			})
			// The server applies the transaction before the proxy drops
			// its reply: wait for the drop rather than look once.
			select {
			case <-<-armed:
			case <-time.After(testkit.Deadline):
				t.Fatal("no reply was lost: the test proves nothing")
			}
			for _, err := range drain(errs) {
				t.Errorf("reported %v", err)
			}
			if extra := drain(k.items); len(extra) != 0 {
				t.Fatalf("consumed again: %v", extra)
			}
		})
	}
}
