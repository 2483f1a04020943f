package node_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/clock"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/node"
	"github.com/gocurator/curator/zktest"
)

// containerCheck is zktest's znode.container.checkIntervalMs: how often
// the server reaps expired TTL nodes and empty containers.
const containerCheck = time.Second

// A TTL node (Curator's PersistentTtlNode) with ExpireAfterClose: the node
// and its touch child are TTL nodes, the child is touched every ttl/2
// (timed by the injected clock), and after Close the touches stop (no timer
// left) and the server reaps both within 2×ttl plus its check interval.
func TestTTLNodeTouchedThenReaped(t *testing.T) {
	t.Parallel()
	const ttl = time.Second
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	admin := testkit.Connect(t, zkAddr, ns)
	fake := clock.NewFake(time.Now())
	n := node.New(c, "/ttl/n", []byte("d"), node.WithTTL(ttl), node.ExpireAfterClose(), node.WithClock(fake))
	start(t, n)
	st := stat(t, admin, "/ttl/n")
	touch := stat(t, admin, "/ttl/n/touch")
	if st == nil || touch == nil {
		t.Fatalf("node %+v, touch %+v", st, touch)
	}
	if p := fake.Pending(); len(p) != 1 || p[0].Sub(fake.Now()) != ttl/2 {
		t.Fatalf("touch timer %v, want one at ttl/2", p)
	}
	for i := range 3 {
		before := stat(t, admin, "/ttl/n/touch").Mzxid
		fake.Advance(ttl / 2)
		testkit.Eventually(t, "a touch", func() bool { return stat(t, admin, "/ttl/n/touch").Mzxid > before })
		t.Logf("touch %d", i+1)
	}
	closed := time.Now()
	closeNode(t, n)
	if p := fake.Pending(); len(p) != 0 {
		t.Fatalf("timers left after Close: %v", p)
	}
	if st := stat(t, admin, "/ttl/n"); st == nil {
		t.Fatal("with ExpireAfterClose, a TTL node is left for the server to reap, not deleted by Close")
	}
	testkit.Eventually(t, "the TTL node reaped", func() bool { return stat(t, admin, "/ttl/n") == nil })
	took := time.Since(closed)
	t.Logf("reaped %v after Close", took)
	if limit := 2*ttl + containerCheck + 500*time.Millisecond; took > limit {
		t.Fatalf("reaped %v after Close, want within %v", took, limit)
	}
}

// Curator 5.9's fix: a TTL node whose touch child was never made (here:
// deleted before Close) is still reaped, as its parent is a TTL node, not
// a container that only goes once it had a child.
func TestTTLNodeWithoutTouchChildIsReaped(t *testing.T) {
	t.Parallel()
	const ttl = time.Second
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	admin := testkit.Connect(t, zkAddr, ns)
	fake := clock.NewFake(time.Now()) // no touch after the first
	n := node.New(c, "/ttl/n", nil, node.WithTTL(ttl), node.ExpireAfterClose(), node.WithClock(fake))
	start(t, n)
	if err := admin.Delete(testkit.Ctx(t), "/ttl/n/touch"); err != nil {
		t.Fatal(err)
	}
	closed := time.Now()
	closeNode(t, n)
	testkit.Eventually(t, "the TTL node reaped", func() bool { return stat(t, admin, "/ttl/n") == nil })
	took := time.Since(closed)
	t.Logf("reaped %v after Close", took)
	if limit := 2*ttl + containerCheck + 500*time.Millisecond; took > limit {
		t.Fatalf("reaped %v after Close, want within %v", took, limit)
	}
}

// Close deletes a TTL node as it deletes a node of any other mode: the
// touch child and the node are both gone when Close returns, long before
// any TTL could pass (no reaper involved), and the touches have stopped.
func TestTTLNodeCloseDeletesBoth(t *testing.T) {
	t.Parallel()
	const ttl = time.Hour
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	admin := testkit.Connect(t, zkAddr, ns)
	fake := clock.NewFake(time.Now())
	for _, mode := range []framework.Mode{framework.PersistentWithTTL, framework.PersistentSequentialWithTTL} {
		n := node.New(c, "/ttl/n-", []byte("d"), node.WithTTL(ttl), node.WithMode(mode), node.WithClock(fake))
		start(t, n)
		touch := framework.JoinPath(n.Path(), "touch")
		if stat(t, admin, n.Path()) == nil || stat(t, admin, touch) == nil {
			t.Fatalf("%v: node or touch child missing after Start", mode)
		}
		// A touch, so the child has been written since its create.
		before := stat(t, admin, touch).Mzxid
		fake.Advance(ttl / 2)
		testkit.Eventually(t, "a touch", func() bool { return stat(t, admin, touch).Mzxid > before })
		closeNode(t, n)
		if st := stat(t, admin, touch); st != nil {
			t.Fatalf("%v: touch child left by Close: %+v", mode, st)
		}
		if st := stat(t, admin, n.Path()); st != nil {
			t.Fatalf("%v: TTL node left by Close: %+v", mode, st)
		}
		if p := fake.Pending(); len(p) != 0 {
			t.Fatalf("%v: timers left after Close: %v", mode, p)
		}
	}
	// The parent container is left to the server, as for every mode.
	if kids := testkit.Children(t, admin, "/ttl"); len(kids) != 0 {
		t.Fatalf("left under /ttl: %v", kids)
	}
}

// Close deletes only what is ours: a child someone else made under our TTL
// node stays, and so does the node (a node goes only once childless); Close
// says why. Our touch child is deleted all the same.
func TestTTLNodeCloseLeavesOthersChildren(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	admin := testkit.Connect(t, zkAddr, ns)
	n := node.New(c, "/ttl/n", nil, node.WithTTL(time.Hour), node.WithClock(clock.NewFake(time.Now())))
	start(t, n)
	ctx := testkit.Ctx(t)
	if _, err := admin.Create(ctx, "/ttl/n/theirs", nil); err != nil {
		t.Fatal(err)
	}
	err := n.Close(ctx)
	if !errors.Is(err, zk.ErrNotEmpty) {
		t.Fatalf("Close = %v, want zk.ErrNotEmpty", err)
	}
	t.Log(err)
	if got := testkit.Children(t, admin, "/ttl/n"); len(got) != 1 || got[0] != "theirs" {
		t.Fatalf("children after Close %v, want [theirs]", got)
	}
	if err := admin.Delete(ctx, "/ttl/n", framework.DeletingChildren()); err != nil {
		t.Fatal(err)
	}
}

// Close on a TTL node whose data someone changed since Start (its version
// is not the one the Node wrote) still deletes it: ours is told by the
// incarnation (czxid), as for every persistent mode, not by the version.
func TestTTLNodeCloseAfterForeignWrite(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	admin := testkit.Connect(t, zkAddr, ns)
	n := node.New(c, "/ttl/n", []byte("ours"), node.WithTTL(time.Hour), node.WithClock(clock.NewFake(time.Now())))
	start(t, n)
	ctx := testkit.Ctx(t)
	if _, err := admin.Set(ctx, "/ttl/n", []byte("theirs"), -1); err != nil {
		t.Fatal(err)
	}
	closeNode(t, n)
	if st := stat(t, admin, "/ttl/n"); st != nil {
		t.Fatalf("node left: %+v", st)
	}
}

// Close while the connection is down: the delete cannot be made before
// Close's ctx ends, so Close returns that error, and the delete goes on in
// the background (still checking that the node is ours) and lands once the
// connection is back: a persistent node and a TTL node with its touch child
// are both gone, without the TTL's reaper (a one-hour TTL).
func TestCloseWhileDisconnectedDeletesLater(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts []node.Option
	}{
		{"persistent", []node.Option{node.WithMode(framework.Persistent)}},
		{"TTL", []node.Option{node.WithTTL(time.Hour), node.WithClock(clock.NewFake(time.Now()))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := testkit.Unique(t)
			proxy := zktest.NewProxy(t, zkAddr)
			c := testkit.Connect(t, proxy.Addr(), ns, framework.WithSessionTimeout(20*time.Second))
			admin := testkit.Connect(t, zkAddr, ns)
			n := node.New(c, "/later/n", []byte("d"), tc.opts...)
			start(t, n)
			proxy.Cut()
			testkit.WaitState(t, c, connstate.Suspended)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			err := n.Close(ctx)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Close while disconnected = %v, want its ctx's DeadlineExceeded", err)
			}
			t.Log(err)
			if stat(t, admin, "/later/n") == nil {
				t.Fatal("node gone while the client was cut off")
			}
			proxy.Restore()
			testkit.Eventually(t, "the node deleted in the background", func() bool {
				return stat(t, admin, "/later/n") == nil
			})
		})
	}
}

// A server without extended types refuses TTL nodes: Start says so with
// ErrTTLUnsupported, and leaves nothing.
func TestTTLRefusedByServer(t *testing.T) {
	t.Parallel()
	srv, err := zktest.Launch(zktest.WithJVMArgs("-Dzookeeper.extendedTypesEnabled=false"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	c := testkit.Connect(t, srv.ConnectString(), "")
	n := node.New(c, "/ttl", nil, node.WithTTL(time.Second))
	err = n.Start(testkit.Ctx(t))
	if !errors.Is(err, node.ErrTTLUnsupported) {
		t.Fatalf("Start = %v, want ErrTTLUnsupported", err)
	}
	t.Log(err)
	closeNode(t, n)
	if st := stat(t, c, "/ttl"); st != nil {
		t.Fatalf("node left: %+v", st)
	}
	// The same client makes ordinary nodes.
	plain := node.New(c, "/plain", nil, node.WithMode(framework.Ephemeral))
	start(t, plain)
	closeNode(t, plain)
}

// Issue 33 item 11: WithTTL(0) made a plain node that no TTL reaps, though
// the docs said it was refused. Every ttl outside the server's bounds is
// refused by Start with ErrInvalidOption, before any I/O and leaving
// nothing; the bounds themselves are accepted.
func TestWithTTLBounds(t *testing.T) {
	t.Parallel()
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	for _, tc := range []struct {
		name string
		ttl  time.Duration
		ok   bool
	}{
		{"zero", 0, false},
		{"negative", -time.Second, false},
		{"under a millisecond", time.Millisecond - 1, false},
		{"minimum", node.MinTTL, true},
		{"an hour", time.Hour, true},
		{"maximum", node.MaxTTL, true},
		{"over the maximum", node.MaxTTL + time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := "/ttl-" + strings.ReplaceAll(tc.name, " ", "-")
			n := node.New(c, p, nil, node.WithTTL(tc.ttl))
			err := n.Start(testkit.Ctx(t))
			switch {
			case !tc.ok && !errors.Is(err, node.ErrInvalidOption):
				t.Fatalf("Start with TTL %v = %v, want ErrInvalidOption", tc.ttl, err)
			case !tc.ok && stat(t, c, p) != nil:
				t.Fatalf("a refused TTL %v left a node", tc.ttl)
			case tc.ok && err != nil:
				t.Fatalf("Start with TTL %v = %v", tc.ttl, err)
			case tc.ok:
				if st := stat(t, c, p); st == nil || st.EphemeralOwner != 0 {
					t.Fatalf("TTL %v: node %+v", tc.ttl, st)
				}
			}
			closeNode(t, n)
		})
	}
}
