package conformance_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/atomic"
	"github.com/gocurator/curator/recipes/barrier"
	"github.com/gocurator/curator/recipes/queue"
	"github.com/gocurator/curator/recipes/shared"
	"github.com/gocurator/curator/zktest"
)

// waitKind is a handle that waits for other processes without holding a
// lock (a barrier's Wait, a double barrier's Enter and Leave): wait blocks
// on c until something another client does; arrange sets that up, on
// other; waiting reports that the waiter on c has set its watch and
// waits.
type waitKind struct {
	name    string
	arrange func(ctx context.Context, t *testing.T, other *framework.Client)
	wait    func(ctx context.Context, c *framework.Client) error
	waiting func(t *testing.T, c *framework.Client) bool
}

// watchesBarrier reports whether c watches the barrier node.
func watchesBarrier(t *testing.T, c *framework.Client) bool {
	return slices.Contains(testkit.SessionWatches(t, zkAddr, c.SessionID()), testkit.FullPath(c, "/barrier"))
}

var waitKinds = []waitKind{
	{"barrier wait",
		func(ctx context.Context, t *testing.T, other *framework.Client) {
			if err := barrier.New(other, "/barrier").Set(ctx); err != nil {
				t.Fatal(err)
			}
		},
		func(ctx context.Context, c *framework.Client) error {
			return barrier.New(c, "/barrier").Wait(ctx)
		},
		watchesBarrier},
	{"double barrier enter",
		func(context.Context, *testing.T, *framework.Client) {},
		func(ctx context.Context, c *framework.Client) error {
			return barrier.NewDouble(c, "/barrier", 2).Enter(ctx)
		},
		func(t *testing.T, c *framework.Client) bool {
			// A member waits on the ready node, the only change that
			// can let it in.
			watching := slices.Contains(testkit.SessionWatches(t, zkAddr, c.SessionID()), testkit.FullPath(c, "/barrier/ready"))
			return watching && len(testkit.Children(t, c, "/barrier")) == 1
		}},
	{"double barrier leave",
		func(ctx context.Context, t *testing.T, other *framework.Client) {
			// The other member enters with us and stays: our Leave
			// waits for it.
			d := barrier.NewDouble(other, "/barrier", 2)
			ectx, cancel := context.WithCancel(ctx)
			errc := make(chan error, 1)
			go func() { errc <- d.Enter(ectx) }()
			t.Cleanup(func() { cancel(); <-errc })
			testkit.Eventually(t, "the other member entering", func() bool {
				return len(testkit.Children(t, other, "/barrier")) == 1
			})
		},
		func(ctx context.Context, c *framework.Client) error {
			d := barrier.NewDouble(c, "/barrier", 2)
			if err := d.Enter(ctx); err != nil {
				return err
			}
			return d.Leave(ctx)
		},
		func(t *testing.T, c *framework.Client) bool {
			// Leave watches one member node at a time.
			return watchesUnder(t, c, "/barrier")
		}},
	// The queues' consumers wait for items, on the same rules; the queue
	// lives at /barrier so that memberNodes counts what they leave.
	{"queue consume",
		func(context.Context, *testing.T, *framework.Client) {},
		func(ctx context.Context, c *framework.Client) error {
			return queue.New(c, "/barrier").Consume(ctx, acceptItem)
		},
		watchesBarrier},
	{"queue consume, lock path",
		func(context.Context, *testing.T, *framework.Client) {},
		func(ctx context.Context, c *framework.Client) error {
			return queue.New(c, "/barrier", queue.WithLockPath("/queue-locks")).Consume(ctx, acceptItem)
		},
		watchesBarrier},
	{"simple queue take",
		func(context.Context, *testing.T, *framework.Client) {},
		func(ctx context.Context, c *framework.Client) error {
			_, err := queue.NewSimple(c, "/barrier").Take(ctx)
			return err
		},
		watchesBarrier},
	{"queue sharder consume",
		func(ctx context.Context, t *testing.T, other *framework.Client) {
			// The shard is made by another process, beforehand.
			s := queue.NewSharder(other, "/barrier", "/sharder-leader")
			if err := s.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(ctx); err != nil {
				t.Fatal(err)
			}
		},
		func(ctx context.Context, c *framework.Client) error {
			s := queue.NewSharder(c, "/barrier", "/sharder-leader")
			if err := s.Start(ctx); err != nil {
				return err
			}
			defer func() {
				cctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				_ = s.Close(cctx)
			}()
			return s.Consume(ctx, acceptItem)
		},
		func(t *testing.T, c *framework.Client) bool {
			// Its consumer watches the shard.
			return watchesUnder(t, c, "/barrier")
		}},
}

// acceptItem is a consume function that takes every item.
func acceptItem(context.Context, queue.Item) error { return nil }

// watchesUnder reports whether c watches a node below path.
func watchesUnder(t *testing.T, c *framework.Client, path string) bool {
	prefix := testkit.FullPath(c, path) + "/"
	return slices.ContainsFunc(testkit.SessionWatches(t, zkAddr, c.SessionID()), func(p string) bool {
		return strings.HasPrefix(p, prefix)
	})
}

// Close of the client ends every waiter of the barriers with
// framework.ErrClosed, as it ends a lock's waiters, and an entered member's
// membership with it too; nothing the waiter made is left.
func TestCloseEndsBarrierWaiters(t *testing.T) {
	for _, k := range waitKinds {
		t.Run(k.name, func(t *testing.T) {
			ns := testkit.Unique(t)
			ctx := testkit.Ctx(t)
			other := testkit.Connect(t, zkAddr, ns)
			k.arrange(ctx, t, other)
			before := memberNodes(t, other)
			c, err := framework.Connect(ctx, zkAddr, framework.WithNamespace(ns))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			errc := make(chan error, 1)
			go func() { errc <- k.wait(ctx, c) }()
			testkit.Eventually(t, "waiter waiting", func() bool { return k.waiting(t, c) })
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-errc:
				if !errors.Is(err, framework.ErrClosed) {
					t.Fatalf("waiter ended with %v, want ErrClosed", err)
				}
			case <-time.After(testkit.Deadline):
				t.Fatal("waiter still waiting after Close")
			}
			if n := memberNodes(t, other); n > before {
				t.Fatalf("%d nodes under the barrier after Close, %d before the waiter", n, before)
			}
		})
	}
}

// A barrier wait whose deadline passes while the connection is down
// returns at its deadline, not after a clean-up in the foreground, and what
// it made is deleted once the connection is back.
func TestBarrierDeadlineWhileDisconnected(t *testing.T) {
	for _, k := range waitKinds {
		t.Run(k.name, func(t *testing.T) {
			ns := testkit.Unique(t)
			ctx := testkit.Ctx(t)
			proxy := zktest.NewProxy(t, zkAddr)
			other := testkit.Connect(t, zkAddr, ns)
			k.arrange(ctx, t, other)
			before := memberNodes(t, other)
			c := testkit.Connect(t, proxy.Addr(), ns)
			wctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
			defer cancel()
			deadline, _ := wctx.Deadline()
			errc := make(chan error, 1)
			go func() { errc <- k.wait(wctx, c) }()
			testkit.Eventually(t, "waiter waiting", func() bool { return k.waiting(t, c) })
			proxy.Cut()
			var err error
			select {
			case err = <-errc:
			case <-time.After(testkit.Deadline):
				t.Fatal("wait never returned")
			}
			late := time.Since(deadline)
			t.Logf("returned %v after its deadline: %v", late, err)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("wait = %v, want DeadlineExceeded", err)
			}
			// A hang detector, as in TestAcquireDeadlineWhileDisconnected.
			if late >= 5*time.Second {
				t.Fatalf("wait returned %v after its deadline: its clean-up waited in the foreground", late)
			}
			proxy.Restore()
			testkit.Eventually(t, "the waiter's node deleted", func() bool {
				return memberNodes(t, other) <= before
			})
		})
	}
}

// The blocking calls of the barriers, counters and values refuse a nil
// context before anything changes: no node is made.
func TestNilContextChangesNothing(t *testing.T) {
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
	var nilCtx context.Context
	calls := map[string]func() error{
		"Barrier.Set":  func() error { return barrier.New(c, "/x").Set(nilCtx) },
		"Barrier.Wait": func() error { return barrier.New(c, "/x").Wait(nilCtx) },
		"Double.Enter": func() error { return barrier.NewDouble(c, "/x", 1).Enter(nilCtx) },
		"Double.Leave": func() error { return barrier.NewDouble(c, "/x", 1).Leave(nilCtx) },
		"Long.Add":     func() error { _, err := atomic.NewLong(c, "/x").Add(nilCtx, 1); return err },
		"Long.Get":     func() error { _, err := atomic.NewLong(c, "/x").Get(nilCtx); return err },
		"Int.ForceSet": func() error { return atomic.NewInt(c, "/x").ForceSet(nilCtx, 1) },
		"Value.Initialize": func() error {
			_, err := atomic.NewValue(c, "/x").Initialize(nilCtx, []byte("v"))
			return err
		},
		"shared.Value.Set":   func() error { return shared.NewValue(c, "/x", nil).Set(nilCtx, []byte("v")) },
		"shared.Value.Start": func() error { return shared.NewValue(c, "/x", nil).Start(nilCtx) },
		"shared.Count.Get":   func() error { _, err := shared.NewCount(c, "/x", 0).Get(nilCtx); return err },
		"Queue.Consume":      func() error { return queue.New(c, "/x").Consume(nilCtx, acceptItem) },
		"Queue.Put":          func() error { return queue.New(c, "/x").Put(nilCtx, []byte("v")) },
		"Queue.PutAsync":     func() error { return queue.New(c, "/x").PutAsync(nilCtx, []byte("v")) },
		"Queue.Flush":        func() error { return queue.New(c, "/x").Flush(nilCtx) },
		"Simple.Take":        func() error { _, err := queue.NewSimple(c, "/x").Take(nilCtx); return err },
		"Simple.Offer":       func() error { return queue.NewSimple(c, "/x").Offer(nilCtx, []byte("v")) },
		"Sharder.Start":      func() error { return queue.NewSharder(c, "/x", "/x-leader").Start(nilCtx) },
		"Sharder.Consume":    func() error { return queue.NewSharder(c, "/x", "/x-leader").Consume(nilCtx, acceptItem) },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			if err := call(); !errors.Is(err, framework.ErrInvalidOption) {
				t.Fatalf("nil ctx: %v, want ErrInvalidOption", err)
			}
			if st, err := c.Exists(ctx, "/x"); err != nil || st != nil {
				t.Fatalf("/x after a refused call: %v, %v", st, err)
			}
		})
	}
}

// memberNodes counts the nodes under /barrier but a double barrier's
// "ready", which belongs to the round, not to a member.
func memberNodes(t *testing.T, c *framework.Client) int {
	t.Helper()
	return len(slices.DeleteFunc(testkit.Children(t, c, "/barrier"), func(k string) bool { return k == "ready" }))
}
