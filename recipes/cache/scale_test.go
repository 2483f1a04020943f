package cache_test

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/cache"
)

var fullScale = flag.Bool("cache.scale", false,
	"full-size scale tests: a 100,000-node tree and 70,000 children (make cache-scale); the suite runs a tenth")

// createMany creates paths (parents listed before children) with
// transactions of batch creates.
func createMany(t testing.TB, ctx context.Context, c *framework.Client, paths []string, batch int) {
	t.Helper()
	for len(paths) > 0 {
		n := min(batch, len(paths))
		ops := make([]framework.Op, n)
		for i, p := range paths[:n] {
			ops[i] = framework.CreateOp(p, []byte{}, framework.Persistent)
		}
		if _, err := c.Multi(ctx, ops...); err != nil {
			t.Fatalf("create %d nodes from %s: %v", n, paths[0], err)
		}
		paths = paths[n:]
	}
}

// deleteMany deletes paths (children listed after parents), in
// transactions, deepest first.
func deleteMany(t testing.TB, c *framework.Client, paths []string, batch int) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*testkit.Deadline)
	defer cancel()
	for len(paths) > 0 {
		n := min(batch, len(paths))
		tail := paths[len(paths)-n:]
		ops := make([]framework.Op, 0, n)
		for i := len(tail) - 1; i >= 0; i-- {
			ops = append(ops, framework.DeleteOp(tail[i], -1))
		}
		if _, err := c.Multi(ctx, ops...); err != nil {
			t.Errorf("delete %d nodes: %v", n, err)
			return
		}
		paths = paths[:len(paths)-n]
	}
}

func scale(n int) int {
	if *fullScale {
		return n
	}
	return n / 10
}

// loadCounts starts a cache of root and checks that it holds as many
// nodes as the server, and that Initialized came after all of them.
func loadCounts(t *testing.T, ctx context.Context, c *framework.Client, root string, want int, opts ...cache.Option) {
	t.Helper()
	ch := cache.New(c, root, opts...)
	t.Cleanup(func() { _ = ch.Close() })
	created := 0
	initialized := make(chan int, 1)
	cancel := ch.Listen(func(ev cache.Event) {
		switch ev.Type {
		case cache.Created:
			created++
		case cache.Initialized:
			initialized <- created
		}
	})
	defer cancel()
	start := time.Now()
	if err := ch.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded %d nodes in %v", ch.Len(), time.Since(start))
	if ch.Len() != want {
		t.Fatalf("cached %d nodes, server has %d", ch.Len(), want)
	}
	select {
	case n := <-initialized:
		if n != want {
			t.Fatalf("Initialized after %d Created, want %d", n, want)
		}
	case <-ctx.Done():
		t.Fatal("no Initialized")
	}
}

// CURATOR-690: Curator 5.4 fires initialized with nodes missing once more
// than 65,535 reads are in flight (70,000 children cached as 65,535).
// Reads in flight are bounded here: every child is cached.
func TestLoadManyChildren(t *testing.T) {
	t.Parallel()
	n := scale(70_000)
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, ns)
	mustCreate(t, ctx, c, "/kids", "")
	paths := make([]string, n)
	for i := range paths {
		paths[i] = fmt.Sprintf("/kids/c%06d", i)
	}
	createMany(t, ctx, c, paths, 5000)
	t.Cleanup(func() { deleteMany(t, c, append([]string{"/kids"}, paths...), 5000) })
	loadCounts(t, ctx, c, "/kids", n+1, cache.WithMaxDepth(1))
}

// A 100,000-node tree of mixed depth (100 x 10 x 100 below the root, and
// the inner nodes) loads whole.
func TestLoadBigTree(t *testing.T) {
	t.Parallel()
	top := scale(100)
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, ns)
	mustCreate(t, ctx, c, "/tree", "")
	var paths []string
	for i := 0; i < top; i++ {
		a := fmt.Sprintf("/tree/a%03d", i)
		paths = append(paths, a)
		for j := 0; j < 10; j++ {
			b := fmt.Sprintf("%s/b%d", a, j)
			paths = append(paths, b)
			for k := 0; k < 100; k++ {
				paths = append(paths, fmt.Sprintf("%s/c%02d", b, k))
			}
		}
	}
	createMany(t, ctx, c, paths, 5000)
	t.Cleanup(func() { deleteMany(t, c, append([]string{"/tree"}, paths...), 5000) })
	loadCounts(t, ctx, c, "/tree", len(paths)+1)
}

// A children listing over 1 MB (Java's client refuses replies over
// jute.maxbuffer) loads.
func TestLoadListingOverOneMB(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, ns)
	mustCreate(t, ctx, c, "/wide", "")
	pad := strings.Repeat("x", 200)
	paths := make([]string, 6000) // 6000 x (4 + 207) bytes: 1.27 MB
	for i := range paths {
		paths[i] = fmt.Sprintf("/wide/%s%06d", pad, i)
	}
	createMany(t, ctx, c, paths, 2000)
	t.Cleanup(func() { deleteMany(t, c, append([]string{"/wide"}, paths...), 2000) })
	kids, _, err := c.Children(ctx, "/wide")
	if err != nil {
		t.Fatal(err)
	}
	size := 0
	for _, k := range kids {
		size += 4 + len(k)
	}
	if size <= 1<<20 {
		t.Fatalf("listing is %d bytes, want over 1 MiB", size)
	}
	loadCounts(t, ctx, c, "/wide", len(paths)+1)
}
