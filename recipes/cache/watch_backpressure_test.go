package cache_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/cache"
	"github.com/gocurator/curator/zktest"
)

var ownerOnly = zk.DigestACL(zk.PermAll, "owner", "pw")

// Issue 33 item 5: with one-shot watches, Start on a root the client may
// not read fails with zk.ErrNoAuth (as with a persistent watch) instead of
// waiting until ctx ends, and leaves no watch on the server.
func TestOneShotStartUnreadableRoot(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	owner := testkit.Connect(t, zkAddr, ns, framework.WithAuth("digest", []byte("owner:pw")))
	if _, err := owner.Create(ctx, "/secret", nil, framework.WithACL(ownerOnly)); err != nil {
		t.Fatal(err)
	}
	c := testkit.Connect(t, zkAddr, ns)
	for _, tc := range []struct {
		name string
		opts []cache.Option
	}{
		{"persistent", nil},
		{"one-shot", []cache.Option{cache.OneShotWatches()}},
		{"one-shot single node", []cache.Option{cache.OneShotWatches(), cache.SingleNode()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := cache.New(c, "/secret", tc.opts...)
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			err := ch.Start(sctx)
			if !errors.Is(err, zk.ErrNoAuth) {
				t.Fatalf("Start on an unreadable root = %v, want zk.ErrNoAuth", err)
			}
			if err := ch.Close(); err != nil {
				t.Fatal(err)
			}
			testkit.AwaitWatchCount(t, zkAddr, 0, c)
		})
	}
}

// With one-shot watches, an unreadable child is reported (Unreadable) and
// Start returns, as with a persistent watch.
func TestOneShotStartUnreadableChild(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	owner := testkit.Connect(t, zkAddr, ns, framework.WithAuth("digest", []byte("owner:pw")))
	mustCreate(t, ctx, owner, "/r/open", "o")
	if _, err := owner.Create(ctx, "/r/secret", nil, framework.WithACL(ownerOnly)); err != nil {
		t.Fatal(err)
	}
	c := testkit.Connect(t, zkAddr, ns)
	ch := cache.New(c, "/r", cache.OneShotWatches())
	defer ch.Close()
	rec, cancel := record(ch)
	defer cancel()
	sctx, cancelStart := context.WithTimeout(ctx, 10*time.Second)
	defer cancelStart()
	if err := ch.Start(sctx); err != nil {
		t.Fatalf("Start with an unreadable child = %v", err)
	}
	ev := rec.await(t, "unreadable", is(cache.Unreadable, "/r/secret"))
	if !errors.Is(ev.Err, zk.ErrNoAuth) {
		t.Fatalf("Unreadable Err = %v", ev.Err)
	}
	mustSet(t, ctx, owner, "/r/open", "o2")
	rec.await(t, "changed", is(cache.Changed, "/r/open"))
	if _, ok := ch.Get("/r/secret"); ok || ch.Len() != 2 {
		t.Fatalf("unreadable node cached (Len %d)", ch.Len())
	}
}

// Issue 33 item 6a: a slow listener, while p is changed, p/c deleted, then
// p deleted, hears p/c's deletion before p's: the coalesced entry of p
// does not jump ahead of later events of its descendants.
func TestSlowListenerKeepsDeepestFirst(t *testing.T) {
	t.Parallel()
	for round := range 3 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			ns := testkit.Unique(t)
			ctx := testkit.Ctx(t)
			c := testkit.Connect(t, zkAddr, ns)
			other := testkit.Connect(t, zkAddr, ns)
			mustCreate(t, ctx, other, "/r/p/c", "c")
			ch := cache.New(c, "/r")
			defer ch.Close()
			if err := ch.Start(ctx); err != nil {
				t.Fatal(err)
			}
			release := make(chan struct{})
			var mu sync.Mutex
			var got []string
			var once sync.Once
			blocked := make(chan struct{})
			defer ch.Listen(func(ev cache.Event) {
				once.Do(func() { close(blocked) })
				<-release
				mu.Lock()
				got = append(got, ev.Type.String()+" "+ev.Path)
				mu.Unlock()
			})()
			// A first event holds the listener in fn, so the rest queue.
			mustCreate(t, ctx, other, "/r/first", "")
			testkit.WaitClosed(t, blocked, "the listener holding its first event")
			mustSet(t, ctx, other, "/r/p", "p2")
			if err := ch.Synced(ctx); err != nil {
				t.Fatal(err)
			}
			mustDelete(t, ctx, other, "/r/p/c")
			if err := ch.Synced(ctx); err != nil {
				t.Fatal(err)
			}
			mustDelete(t, ctx, other, "/r/p")
			if err := ch.Synced(ctx); err != nil {
				t.Fatal(err)
			}
			close(release)
			testkit.Eventually(t, "the deletions heard", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(got) >= 3
			})
			mu.Lock()
			defer mu.Unlock()
			want := []string{"created /r/first", "deleted /r/p/c", "deleted /r/p"}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("events %v, want %v", got, want)
			}
		})
	}
}

// Issue 33 item 6b: a blocked listener's queue stays bounded across
// reconnections when the tree holds an unreadable node (each resync
// reports it again), and a slow listener hears every resync's outcome in
// order; neither holds the cache up.
func TestBlockedListenerBoundedAcrossReconnects(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	owner := testkit.Connect(t, zkAddr, ns, framework.WithAuth("digest", []byte("owner:pw")))
	mustCreate(t, ctx, owner, "/r/open", "o")
	if _, err := owner.Create(ctx, "/r/secret", nil, framework.WithACL(ownerOnly)); err != nil {
		t.Fatal(err)
	}
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns)
	ch := cache.New(c, "/r")
	defer ch.Close()
	if err := ch.Start(ctx); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	defer close(release)
	blocked := make(chan struct{})
	var once sync.Once
	defer ch.Listen(func(cache.Event) {
		once.Do(func() { close(blocked) })
		<-release
	})()
	rec, cancel := record(ch)
	defer cancel()
	resyncs := func() int {
		n := 0
		for _, ev := range rec.snapshot() {
			if ev.Type == cache.Resynced {
				n++
			}
		}
		return n
	}
	mustSet(t, ctx, owner, "/r/open", "o1")
	testkit.WaitClosed(t, blocked, "the blocked listener holding its first event")
	const cuts = 6
	for i := range cuts {
		proxy.Cut()
		testkit.WaitState(t, c, connstate.Suspended)
		proxy.Restore()
		testkit.Eventually(t, "resynced", func() bool { return resyncs() == i+1 })
	}
	// The cache was not held up: it follows changes.
	mustSet(t, ctx, owner, "/r/open", "o2")
	if err := ch.Synced(ctx); err != nil {
		t.Fatal(err)
	}
	if n, ok := ch.Get("/r/open"); !ok || string(n.Data) != "o2" || ch.Len() != 2 {
		t.Fatalf("cache after the cuts: /r/open %q, Len %d", n.Data, ch.Len())
	}
	lens := cache.QueueLens(ch)
	// Per path: at most a deletion and what followed; plus the markers.
	// Two paths in the tree (/r/open, /r/secret; /r unchanged), one
	// Resynced.
	for _, n := range lens {
		if n > 4 {
			t.Fatalf("queues %v after %d reconnections: grows with them", lens, cuts)
		}
	}
}

// A slow listener through cuts and a session expiry, with an unreadable
// node in the tree: replaying what it hears, in order, on a mirror (each
// creation under a parent it has, each deletion of a leaf it has) gives
// the cache's final state; a blocked one's queue stays bounded meanwhile.
// In both watch modes.
func TestSlowAndBlockedListenersThroughExpiry(t *testing.T) {
	t.Parallel()
	for _, mode := range []struct {
		name string
		opts []cache.Option
	}{{"persistent", nil}, {"one-shot", []cache.Option{cache.OneShotWatches()}}} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			ns := testkit.Unique(t)
			ctx := testkit.Ctx(t)
			owner := testkit.Connect(t, zkAddr, ns, framework.WithAuth("digest", []byte("owner:pw")))
			mustCreate(t, ctx, owner, "/r/a/x", "x")
			if _, err := owner.Create(ctx, "/r/secret", nil, framework.WithACL(ownerOnly)); err != nil {
				t.Fatal(err)
			}
			proxy := zktest.NewProxy(t, zkAddr)
			c := testkit.Connect(t, proxy.Addr(), ns, framework.WithSessionTimeout(4*time.Second))
			ch := cache.New(c, "/r", mode.opts...)
			defer ch.Close()
			mirror := map[string]bool{}
			var mu sync.Mutex
			var bad []string
			slow := make(chan struct{})
			release := make(chan struct{})
			defer func() {
				select {
				case <-release:
				default:
					close(release)
				}
			}()
			defer ch.Listen(func(ev cache.Event) {
				<-slow
				mu.Lock()
				defer mu.Unlock()
				parent, _ := framework.SplitPath(ev.Path)
				switch ev.Type {
				case cache.Created:
					if ev.Path != "/r" && !mirror[parent] {
						bad = append(bad, "created "+ev.Path+" before its parent")
					}
					mirror[ev.Path] = true
				case cache.Deleted:
					for p := range mirror {
						if len(p) > len(ev.Path) && p[:len(ev.Path)+1] == ev.Path+"/" {
							bad = append(bad, "deleted "+ev.Path+" before "+p)
						}
					}
					delete(mirror, ev.Path)
				}
			})()
			defer ch.Listen(func(cache.Event) { <-release })()
			if err := ch.Start(ctx); err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				proxy.Cut()
				testkit.WaitState(t, c, connstate.Suspended)
				mustCreate(t, ctx, owner, fmt.Sprintf("/r/a/y%d/z", i), "z")
				mustSet(t, ctx, owner, "/r/a", fmt.Sprint(i))
				proxy.Restore()
				testkit.WaitState(t, c, connstate.Reconnected)
				mustDelete(t, ctx, owner, fmt.Sprintf("/r/a/y%d", i))
			}
			// A session expiry, on the server: its ephemeral goes.
			if _, err := c.Create(ctx, "/marker", nil, framework.WithMode(framework.Ephemeral)); err != nil {
				t.Fatal(err)
			}
			proxy.BlackHole()
			testkit.WaitState(t, c, connstate.Lost)
			testkit.Eventually(t, "the server expires the session", func() bool {
				st, err := owner.Exists(ctx, "/marker")
				return err == nil && st == nil
			})
			mustSet(t, ctx, owner, "/r/a", "p2")
			mustDelete(t, ctx, owner, "/r/a/x")
			mustDelete(t, ctx, owner, "/r/a")
			proxy.Restore()
			testkit.WaitState(t, c, connstate.Reconnected)
			if err := ch.Synced(ctx); err != nil {
				t.Fatal(err)
			}
			for _, n := range cache.QueueLens(ch) {
				// Per path a deletion and what followed: /r/a, /r/a/x,
				// /r/secret; Initialized and one Resynced.
				if n > 2*3+2 {
					t.Fatalf("queues %v: unbounded", cache.QueueLens(ch))
				}
			}
			close(slow)
			testkit.Eventually(t, "the slow listener's mirror matches the cache", func() bool {
				mu.Lock()
				defer mu.Unlock()
				if len(mirror) != ch.Len() {
					return false
				}
				ok := true
				ch.Walk("/r", func(n cache.Node) bool { ok = ok && mirror[n.Path]; return ok })
				return ok
			})
			mu.Lock()
			defer mu.Unlock()
			if len(bad) > 0 {
				t.Fatalf("the slow listener heard a tree no server had: %v", bad)
			}
		})
	}
}

// Synced after a cut: a write made while the cache was cut off is in the
// cache when Synced returns, although the reconnection alone says nothing
// of it (a wake-up is not the condition).
func TestSyncedAfterCutSeesWritesMadeDuringIt(t *testing.T) {
	t.Parallel()
	for _, mode := range []struct {
		name string
		opts []cache.Option
	}{{"persistent", nil}, {"one-shot", []cache.Option{cache.OneShotWatches()}}} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			ns := testkit.Unique(t)
			ctx := testkit.Ctx(t)
			other := testkit.Connect(t, zkAddr, ns)
			mustCreate(t, ctx, other, "/r/n", "0")
			proxy := zktest.NewProxy(t, zkAddr)
			c := testkit.Connect(t, proxy.Addr(), ns)
			ch := cache.New(c, "/r", mode.opts...)
			defer ch.Close()
			if err := ch.Start(ctx); err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 3; i++ {
				proxy.Cut()
				testkit.WaitState(t, c, connstate.Suspended)
				mustSet(t, ctx, other, "/r/n", fmt.Sprint(i))
				mustCreate(t, ctx, other, fmt.Sprintf("/r/new%d", i), "")
				proxy.Restore()
				// Not waiting for the reconnection: Synced must.
				if err := ch.Synced(ctx); err != nil {
					t.Fatal(err)
				}
				if n, _ := ch.Get("/r/n"); string(n.Data) != fmt.Sprint(i) {
					t.Fatalf("cut %d: Synced returned with /r/n = %q", i, n.Data)
				}
				if _, ok := ch.Get(fmt.Sprintf("/r/new%d", i)); !ok {
					t.Fatalf("cut %d: Synced returned without /r/new%d", i, i)
				}
			}
		})
	}
}
