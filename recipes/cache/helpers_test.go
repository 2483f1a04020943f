package cache_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/cache"
)

// snapshot reads the server's tree at root (within depth, -1 for all) as
// c sees it: path -> node.
func snapshot(t testing.TB, ctx context.Context, c *framework.Client, root string, depth int) map[string]cache.Node {
	t.Helper()
	out := map[string]cache.Node{}
	var walk func(p string, d int) error
	walk = func(p string, d int) error {
		data, st, err := c.Get(ctx, p)
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		if err != nil {
			return err
		}
		out[p] = cache.Node{Path: p, Data: data, Stat: *st}
		if depth >= 0 && d >= depth {
			return nil
		}
		kids, _, err := c.Children(ctx, p)
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, k := range kids {
			if err := walk(framework.JoinPath(p, k), d+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root, 0); err != nil {
		t.Fatalf("snapshot of %s: %v", root, err)
	}
	return out
}

// divergences lists how the cache differs from a server snapshot: paths
// missing or extra, and nodes whose data, czxid or mzxid differ.
func divergences(ch *cache.Cache, root string, want map[string]cache.Node) []string {
	var diffs []string
	got := map[string]cache.Node{}
	ch.Walk(root, func(n cache.Node) bool { got[n.Path] = n; return true })
	for p, w := range want {
		g, ok := got[p]
		switch {
		case !ok:
			diffs = append(diffs, "missing "+p)
		case g.Stat.Czxid != w.Stat.Czxid || g.Stat.Mzxid != w.Stat.Mzxid:
			diffs = append(diffs, fmt.Sprintf("%s: czxid/mzxid %d/%d, server %d/%d", p, g.Stat.Czxid, g.Stat.Mzxid, w.Stat.Czxid, w.Stat.Mzxid))
		case !bytes.Equal(g.Data, w.Data):
			diffs = append(diffs, fmt.Sprintf("%s: data %q, server %q", p, g.Data, w.Data))
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			diffs = append(diffs, "extra "+p)
		}
	}
	if ch.Len() != len(got) {
		diffs = append(diffs, fmt.Sprintf("Len %d, walk %d", ch.Len(), len(got)))
	}
	sort.Strings(diffs)
	return diffs
}

// converged fails the test unless, after Synced, the cache matches the
// server.
func converged(t testing.TB, ctx context.Context, ch *cache.Cache, c *framework.Client, root string, depth int) {
	t.Helper()
	if err := ch.Synced(ctx); err != nil {
		t.Fatalf("Synced: %v", err)
	}
	want := snapshot(t, ctx, c, root, depth)
	if d := divergences(ch, root, want); len(d) > 0 {
		if len(d) > 20 {
			d = append(d[:20], fmt.Sprintf("... %d more", len(d)-20))
		}
		t.Fatalf("%d divergences after Synced:\n%v", len(d), d)
	}
}

// recorder collects a listener's events.
type recorder struct {
	mu     sync.Mutex
	events []cache.Event
	signal chan struct{}
}

func record(ch *cache.Cache) (*recorder, func()) {
	r := &recorder{signal: make(chan struct{}, 1)}
	cancel := ch.Listen(func(ev cache.Event) {
		r.mu.Lock()
		r.events = append(r.events, ev)
		r.mu.Unlock()
		select {
		case r.signal <- struct{}{}:
		default:
		}
	})
	return r, cancel
}

func (r *recorder) snapshot() []cache.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]cache.Event(nil), r.events...)
}

// await waits until an event matching f has been recorded and returns
// it.
func (r *recorder) await(t testing.TB, what string, f func(cache.Event) bool) cache.Event {
	t.Helper()
	timer := time.NewTimer(testkit.Deadline)
	defer timer.Stop()
	for {
		for _, ev := range r.snapshot() {
			if f(ev) {
				return ev
			}
		}
		select {
		case <-r.signal:
		case <-timer.C:
			t.Fatalf("no %s event; got %v", what, r.snapshot())
		}
	}
}

func is(typ cache.EventType, path string) func(cache.Event) bool {
	return func(ev cache.Event) bool { return ev.Type == typ && ev.Path == path }
}

func mustCreate(t testing.TB, ctx context.Context, c *framework.Client, p string, data string) {
	t.Helper()
	if _, err := c.Create(ctx, p, []byte(data), framework.CreatingParents()); err != nil {
		t.Fatalf("create %s: %v", p, err)
	}
}

func mustSet(t testing.TB, ctx context.Context, c *framework.Client, p string, data string) {
	t.Helper()
	if _, err := c.Set(ctx, p, []byte(data), -1); err != nil {
		t.Fatalf("set %s: %v", p, err)
	}
}

func mustDelete(t testing.TB, ctx context.Context, c *framework.Client, p string) {
	t.Helper()
	if err := c.Delete(ctx, p, framework.DeletingChildren()); err != nil {
		t.Fatalf("delete %s: %v", p, err)
	}
}
