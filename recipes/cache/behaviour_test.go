package cache_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/cache"
	"github.com/gocurator/curator/zktest"
)

// Close leaves no watch on the server (wchc) in either mode, stops the
// listeners (goleak in TestMain checks the goroutines), and keeps the
// last cached nodes readable; closing the client stops a cache, and
// nothing retries after it (CURATOR-729, namespace included).
func TestCloseLeavesNothing(t *testing.T) {
	for _, mode := range []struct {
		name string
		opts []cache.Option
	}{{"persistent", nil}, {"one-shot", []cache.Option{cache.OneShotWatches()}}, {"node", []cache.Option{cache.SingleNode()}}} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			ns := testkit.Unique(t)
			ctx := testkit.Ctx(t)
			c := testkit.Connect(t, zkAddr, ns)
			mustCreate(t, ctx, c, "/r/a/b", "x")
			ch := cache.New(c, "/r", mode.opts...)
			_, cancel := record(ch)
			defer cancel()
			if err := ch.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if testkit.WatchCount(t, zkAddr, c) == 0 {
				t.Fatal("no server watch while the cache runs")
			}
			if err := ch.Close(); err != nil {
				t.Fatal(err)
			}
			testkit.AwaitWatchCount(t, zkAddr, 0, c)
			if _, ok := ch.Get("/r"); !ok {
				t.Fatal("cached root gone after Close")
			}
			if err := ch.Synced(ctx); !errors.Is(err, cache.ErrClosed) {
				t.Fatalf("Synced after Close = %v", err)
			}
			if err := ch.Close(); err != nil {
				t.Fatalf("second Close = %v", err)
			}
		})
	}
	t.Run("client closed", func(t *testing.T) {
		t.Parallel()
		ns := testkit.Unique(t)
		ctx := testkit.Ctx(t)
		c := testkit.Connect(t, zkAddr, ns)
		ch := cache.New(c, "/r")
		if err := ch.Start(ctx); err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
		if err := ch.Synced(ctx); !errors.Is(err, cache.ErrClosed) && !errors.Is(err, framework.ErrClosed) {
			t.Fatalf("Synced after the client closed = %v", err)
		}
		if err := ch.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// Bad input gets typed errors and leaves nothing running.
func TestBadInput(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, ns)
	for _, tc := range []struct {
		name string
		ch   *cache.Cache
		want error
	}{
		{"relative path", cache.New(c, "r"), cache.ErrInvalidPath},
		{"trailing slash", cache.New(c, "/r/"), cache.ErrInvalidPath},
		{"negative depth", cache.New(c, "/r", cache.WithMaxDepth(-1)), cache.ErrInvalidOption},
		{"nil filter", cache.New(c, "/r", cache.WithFilter(nil)), cache.ErrInvalidOption},
		{"no reads in flight", cache.New(c, "/r", cache.WithReadsInFlight(0)), cache.ErrInvalidOption},
		{"nil option", cache.New(c, "/r", nil), cache.ErrInvalidOption},
		{"nil client", cache.New(nil, "/r"), cache.ErrNilClient},
		{"path over the limit", cache.New(c, "/"+strings.Repeat("p", 1<<20)), framework.ErrDataTooLarge},
		{"nil cache", nil, cache.ErrNilHandle},
	} {
		if err := tc.ch.Start(ctx); !errors.Is(err, tc.want) {
			t.Errorf("%s: Start = %v, want %v", tc.name, err, tc.want)
		}
		if err := tc.ch.Close(); err != nil {
			t.Errorf("%s: Close = %v", tc.name, err)
		}
	}
	var nilCache *cache.Cache
	if _, ok := nilCache.Get("/r"); ok || nilCache.Len() != 0 || nilCache.Children("/r") != nil {
		t.Error("a nil cache reports nodes")
	}
	nilCache.Listen(func(cache.Event) {})()
	ch := cache.New(c, "/r")
	defer ch.Close()
	if err := ch.Synced(ctx); !errors.Is(err, cache.ErrNotStarted) {
		t.Errorf("Synced before Start = %v", err)
	}
	if err := ch.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ch.Start(ctx); !errors.Is(err, cache.ErrStarted) {
		t.Errorf("second Start = %v", err)
	}
	_ = ch.Close()
	if err := ch.Start(ctx); !errors.Is(err, cache.ErrClosed) {
		t.Errorf("Start after Close = %v", err)
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, c)
}

// CURATOR-328/422: a cache started while its server is down fills once
// the server is back.
func TestStartWhileServerDown(t *testing.T) {
	t.Parallel()
	srv := zktest.StartServer(t)
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, srv.Addr(), ns)
	mustCreate(t, ctx, c, "/r/a", "a")
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitState(t, c, connstate.Suspended)
	ch := cache.New(c, "/r")
	defer ch.Close()
	started := make(chan error, 1)
	go func() { started <- ch.Start(ctx) }()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := <-started; err != nil {
		t.Fatalf("Start = %v", err)
	}
	if n, ok := ch.Get("/r/a"); !ok || string(n.Data) != "a" {
		t.Fatalf("Get(/r/a) = %q, %v", n.Data, ok)
	}
}

// Nodes the client may not read are reported (Unreadable), not cached,
// and do not make the load loop.
func TestUnreadableNodesReported(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	owner := testkit.Connect(t, zkAddr, ns, framework.WithAuth("digest", []byte("owner:secret")))
	mustCreate(t, ctx, owner, "/r/open", "o")
	if _, err := owner.Create(ctx, "/r/secret", []byte("s"), framework.WithACL(zk.DigestACL(zk.PermAll, "owner", "secret"))); err != nil {
		t.Fatal(err)
	}
	c := testkit.Connect(t, zkAddr, ns)
	ch := cache.New(c, "/r")
	defer ch.Close()
	rec, cancel := record(ch)
	defer cancel()
	if err := ch.Start(ctx); err != nil {
		t.Fatal(err)
	}
	ev := rec.await(t, "unreadable", is(cache.Unreadable, "/r/secret"))
	if !errors.Is(ev.Err, zk.ErrNoAuth) {
		t.Fatalf("Unreadable Err = %v", ev.Err)
	}
	if _, ok := ch.Get("/r/secret"); ok || ch.Len() != 2 {
		t.Fatalf("unreadable node cached (Len %d)", ch.Len())
	}
	mustSet(t, ctx, owner, "/r/open", "o2")
	if err := ch.Synced(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := ch.Get("/r/open"); string(n.Data) != "o2" {
		t.Fatalf("open node %q after a change", n.Data)
	}
}

// CURATOR-388: the cached path is a container; the server removes it
// when its last child goes, and a client makes it again: the cache
// follows both.
func TestContainerRemovedAndRecreated(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, ns)
	other := testkit.Connect(t, zkAddr, ns)
	if _, err := other.Create(ctx, "/ctr/kid", nil, framework.CreatingParentContainers()); err != nil {
		t.Fatal(err)
	}
	ch := cache.New(c, "/ctr")
	defer ch.Close()
	rec, cancel := record(ch)
	defer cancel()
	if err := ch.Start(ctx); err != nil {
		t.Fatal(err)
	}
	mustDelete(t, ctx, other, "/ctr/kid")
	rec.await(t, "container reaped", is(cache.Deleted, "/ctr"))
	if _, err := other.Create(ctx, "/ctr/kid2", nil, framework.CreatingParentContainers()); err != nil {
		t.Fatal(err)
	}
	converged(t, ctx, ch, other, "/ctr", -1)
	if ch.Len() != 2 {
		t.Fatalf("Len %d after the container is made again", ch.Len())
	}
}

// Back-pressure: a listener that blocks while thousands of changes
// arrive does not hold the cache up (Synced returns meanwhile), and once
// released it gets each path's outcome: applying its events gives the
// cache's final state, with at most a few events per path.
func TestSlowListenerBackPressure(t *testing.T) {
	t.Parallel()
	const paths, writes = 20, 4000
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, ns)
	other := testkit.Connect(t, zkAddr, ns)
	mustCreate(t, ctx, other, "/bp", "")
	ch := cache.New(c, "/bp")
	defer ch.Close()
	if err := ch.Start(ctx); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	view := map[string]string{}
	delivered := 0
	var mu sync.Mutex
	cancel := ch.Listen(func(ev cache.Event) {
		<-release
		mu.Lock()
		defer mu.Unlock()
		delivered++
		switch ev.Type {
		case cache.Created, cache.Changed:
			view[ev.Path] = string(ev.Node.Data)
		case cache.Deleted:
			delete(view, ev.Path)
		}
	})
	defer cancel()
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < writes; i += 8 {
				p := fmt.Sprintf("/bp/n%02d", i%paths)
				if i < paths {
					_, _ = other.Create(ctx, p, []byte("0"))
					continue
				}
				_, _ = other.Set(ctx, p, []byte(fmt.Sprint(i)), -1)
			}
		}(w)
	}
	wg.Wait()
	if err := ch.Synced(ctx); err != nil {
		t.Fatalf("Synced with a blocked listener: %v", err)
	}
	close(release)
	converged(t, ctx, ch, other, "/bp", -1)
	// The listener's view catches up with the cache.
	testkit.Eventually(t, "listener caught up", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, k := range ch.Children("/bp") {
			n, _ := ch.Get("/bp/" + k)
			if view["/bp/"+k] != string(n.Data) {
				return false
			}
		}
		return len(view) == paths
	})
	mu.Lock()
	t.Logf("%d writes, %d events delivered", writes, delivered)
	if delivered >= writes {
		t.Errorf("%d events for %d writes: nothing coalesced", delivered, writes)
	}
	mu.Unlock()
}
