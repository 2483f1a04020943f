package cache_test

import (
	"testing"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/cache"
)

// A listener added before Start hears of every node the load finds once,
// then Initialized; changes after it follow, and the cache matches the
// server after Synced, in every mode.
func TestLoadAndFollow(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  []cache.Option
		depth int
	}{
		{"tree", nil, -1},
		{"children", []cache.Option{cache.WithMaxDepth(1)}, 1},
		{"node", []cache.Option{cache.SingleNode()}, 0},
		{"one-shot tree", []cache.Option{cache.OneShotWatches()}, -1},
		{"one-shot node", []cache.Option{cache.SingleNode(), cache.OneShotWatches()}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := testkit.Unique(t)
			ctx := testkit.Ctx(t)
			c := testkit.Connect(t, zkAddr, ns)
			other := testkit.Connect(t, zkAddr, ns)
			mustCreate(t, ctx, other, "/root/a/x", "ax")
			mustCreate(t, ctx, other, "/root/b", "b")
			ch := cache.New(c, "/root", tc.opts...)
			t.Cleanup(func() { _ = ch.Close() })
			rec, cancel := record(ch)
			defer cancel()
			if err := ch.Start(ctx); err != nil {
				t.Fatal(err)
			}
			rec.await(t, "initialized", is(cache.Initialized, "/root"))
			want := map[int]int{-1: 4, 1: 3, 0: 1}[tc.depth]
			created := 0
			for _, ev := range rec.snapshot() {
				if ev.Type == cache.Created {
					created++
				}
			}
			if created != want || ch.Len() != want {
				t.Fatalf("%d Created before Initialized, Len %d; want %d", created, ch.Len(), want)
			}
			converged(t, ctx, ch, other, "/root", tc.depth)
			mustSet(t, ctx, other, "/root", "r1")
			mustCreate(t, ctx, other, "/root/c/d/e", "cde")
			mustSet(t, ctx, other, "/root/a/x", "ax2")
			mustDelete(t, ctx, other, "/root/b")
			converged(t, ctx, ch, other, "/root", tc.depth)
			if n, ok := ch.Get("/root"); !ok || string(n.Data) != "r1" {
				t.Fatalf("Get(/root) = %q, %v", n.Data, ok)
			}
			rec.await(t, "changed /root", is(cache.Changed, "/root"))
			if tc.depth != 0 {
				rec.await(t, "deleted /root/b", is(cache.Deleted, "/root/b"))
				if got := ch.Children("/root"); len(got) != 2 || got[0] != "a" || got[1] != "c" {
					t.Fatalf("Children = %v", got)
				}
			}
			mustDelete(t, ctx, other, "/root")
			converged(t, ctx, ch, other, "/root", tc.depth)
			if ch.Len() != 0 {
				t.Fatalf("Len %d after the root is deleted", ch.Len())
			}
			mustCreate(t, ctx, other, "/root/again", "")
			converged(t, ctx, ch, other, "/root", tc.depth)
		})
	}
}
