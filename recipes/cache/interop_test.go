package cache_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/cache"
)

// hexOf is data as the driver's commands write it: hex, "-" for empty.
func hexOf(b []byte) string {
	if len(b) == 0 {
		return "-"
	}
	return hex.EncodeToString(b)
}

// interopValues is the data both sides write: empty, text, every byte
// value, 64 KiB that compresses well and 100 KiB that does not.
func interopValues() [][]byte {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	noise := make([]byte, 100<<10)
	rand.New(rand.NewSource(23)).Read(noise)
	return [][]byte{
		{},
		[]byte("hello, curator"),
		all,
		bytes.Repeat([]byte("0123456789abcdef"), 4096),
		noise,
	}
}

// Curator writes, plain and gzip-compressed (create().compressed() with
// its GzipCompressionProvider); Go caches read the same bytes, follow
// Curator's sets, and keep a node that is not compressed as stored, with
// ErrNotCompressed on its event.
func TestInteropCuratorWritesGoCachesRead(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	base := "/interop/" + testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, "")
	t.Cleanup(func() {
		if err := c.Delete(testkit.Ctx(t), base, framework.DeletingChildren(), framework.Quietly()); err != nil {
			t.Error(err)
		}
	})
	java := curatorjava.StartDriver(t, zkAddr)
	values := interopValues()
	for i, v := range values {
		java.MustDo(fmt.Sprintf("cput %s/plain/n%d %s plain", base, i, hexOf(v)))
		java.MustDo(fmt.Sprintf("cput %s/gz/n%d %s gzip", base, i, hexOf(v)))
	}
	start := func(root string, opts ...cache.Option) *cache.Cache {
		ch := cache.New(c, root, opts...)
		t.Cleanup(func() { _ = ch.Close() })
		if err := ch.Start(ctx); err != nil {
			t.Fatal(err)
		}
		return ch
	}
	plain := start(base + "/plain")
	gz := start(base+"/gz", cache.CompressedData())
	raw := start(base + "/gz")
	check := func(step string, want func(v []byte) []byte) {
		t.Helper()
		for _, ch := range []*cache.Cache{plain, gz, raw} {
			if err := ch.Synced(ctx); err != nil {
				t.Fatal(err)
			}
		}
		for i, v := range values {
			v = want(v)
			for _, tc := range []struct {
				name string
				ch   *cache.Cache
				root string
			}{{"plain", plain, "/plain"}, {"compressed", gz, "/gz"}} {
				p := fmt.Sprintf("%s%s/n%d", base, tc.root, i)
				if n, ok := tc.ch.Get(p); !ok || !bytes.Equal(n.Data, v) {
					t.Fatalf("%s: %s cache of %s: %d bytes (%v), Curator wrote %d", step, tc.name, p, len(n.Data), ok, len(v))
				}
			}
			// Without CompressedData the cache holds what is stored:
			// gzip, which Curator's provider writes for empty data too.
			p := fmt.Sprintf("%s/gz/n%d", base, i)
			if n, ok := raw.Get(p); !ok || len(n.Data) < 18 || n.Data[0] != 0x1f || n.Data[1] != 0x8b {
				t.Fatalf("%s: uncompressing cache of %s: % .4x", step, p, n.Data)
			}
		}
	}
	check("load", func(v []byte) []byte { return v })
	// The compressed tree's root was made empty by creatingParentsIfNeeded,
	// as Curator makes parents. Ours keeps empty data as it is and caches
	// the whole tree; Curator 5.4's own compressed CuratorCache fails to
	// decompress the root and caches nothing below it (measured: 0 nodes).
	java.MustDo(fmt.Sprintf("cache jz curator %s/gz gzip", base))
	if err := java.WaitEvent("cache jz INITIALIZED", testkit.Deadline); err != nil {
		t.Fatal(err)
	}
	if n, ok := gz.Get(base + "/gz"); !ok || len(n.Data) != 0 || gz.Len() != len(values)+1 {
		t.Fatalf("compressed cache: root %q (%v), %d nodes; want the empty root and %d", n.Data, ok, gz.Len(), len(values)+1)
	}
	t.Logf("nodes cached from a compressed tree with an empty root: ours %d, Curator's CuratorCache %s",
		gz.Len(), java.MustDo("csize jz"))
	java.MustDo("cclose jz")
	for i, v := range values {
		next := hexOf(append([]byte("next:"), v...))
		java.MustDo(fmt.Sprintf("cput %s/plain/n%d %s plain", base, i, next))
		java.MustDo(fmt.Sprintf("cput %s/gz/n%d %s gzip", base, i, next))
	}
	check("Curator's sets", func(v []byte) []byte { return append([]byte("next:"), v...) })

	rec, cancel := record(gz)
	defer cancel()
	java.MustDo(fmt.Sprintf("cput %s/gz/stray %s plain", base, hexOf([]byte("not gzip"))))
	ev := rec.await(t, "created stray", is(cache.Created, base+"/gz/stray"))
	if !errors.Is(ev.Err, cache.ErrNotCompressed) || !errors.Is(ev.Err, framework.ErrCompression) || string(ev.Node.Data) != "not gzip" {
		t.Fatalf("uncompressed node in a compressed cache: %q, Err %v", ev.Node.Data, ev.Err)
	}
	if n, ok := gz.Get(base + "/gz/stray"); !ok || string(n.Data) != "not gzip" {
		t.Fatalf("uncompressed node cached as %q, %v", n.Data, ok)
	}
}

// javaEvents gathers a driver's "cache <id> ..." events by id.
type javaEvents struct {
	mu   sync.Mutex
	byID map[string][]string
	more chan struct{}
}

func collectJava(t *testing.T, java *curatorjava.Driver) *javaEvents {
	j := &javaEvents{byID: map[string][]string{}, more: make(chan struct{}, 1)}
	done := make(chan struct{})
	stop := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case line, ok := <-java.Events():
				if !ok {
					return
				}
				f := strings.SplitN(line, " ", 3)
				if len(f) < 3 || f[0] != "cache" || strings.HasPrefix(f[2], "CONNECTION_") {
					continue
				}
				j.mu.Lock()
				j.byID[f[1]] = append(j.byID[f[1]], f[2])
				j.mu.Unlock()
				select {
				case j.more <- struct{}{}:
				default:
				}
			case <-stop:
				return
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
	return j
}

func (j *javaEvents) get(id string) []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.byID[id]...)
}

// goEvents is the Go side's events, in the driver's form, by cache.
type goEvents struct {
	mu   sync.Mutex
	byID map[string][]string
	more chan struct{}
}

func (g *goEvents) add(id, typ, path string, data []byte, exists bool) {
	line := typ
	if path != "" {
		d := hexOf(data)
		if !exists {
			d = "none"
		}
		line += " " + path + " " + d
	}
	g.mu.Lock()
	g.byID[id] = append(g.byID[id], line)
	g.mu.Unlock()
	select {
	case g.more <- struct{}{}:
	default:
	}
}

func (g *goEvents) get(id string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.byID[id]...)
}

// sameEvents waits until, for every cache id, Curator's cache and ours
// have each reported want[id] events, then checks that they are the same
// (Curator's names, paths and bytes; in any order within a step, as both
// load in parallel).
func sameEvents(t *testing.T, step string, j *javaEvents, g *goEvents, want map[string]int) {
	t.Helper()
	deadline := time.NewTimer(testkit.Deadline)
	defer deadline.Stop()
	for {
		var diff []string
		waiting := false
		for id, n := range want {
			jv, gv := j.get(id), g.get(id)
			if len(jv) < n || len(gv) < n {
				waiting = true
			}
			slices.Sort(jv)
			slices.Sort(gv)
			if !slices.Equal(jv, gv) {
				diff = append(diff, fmt.Sprintf("%s (%d events expected): Curator %.200q\n  ours %.200q", id, n, jv, gv))
			}
		}
		if !waiting {
			if len(diff) > 0 {
				t.Fatalf("%s: the caches' events differ:\n%s", step, strings.Join(diff, "\n"))
			}
			return
		}
		select {
		case <-j.more:
		case <-g.more:
		case <-deadline.C:
			t.Fatalf("%s: events missing:\n%s", step, strings.Join(diff, "\n"))
		}
	}
}

// Go writes, plain and compressed with framework.Compressed; Curator's
// CuratorCache, TreeCache, PathChildrenCache and NodeCache read the same
// bytes, and report the same events, by Curator's names, as our caches
// through the Curator-shaped adapters.
func TestInteropGoWritesCuratorCachesRead(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	base := "/interop/" + testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, "")
	t.Cleanup(func() {
		if err := c.Delete(testkit.Ctx(t), base, framework.DeletingChildren(), framework.Quietly()); err != nil {
			t.Error(err)
		}
	})
	values := interopValues()
	put := func(p string, v []byte) {
		t.Helper()
		opts := []framework.CreateOption{framework.OrSetData(-1), framework.CreatingParents()}
		if strings.Contains(p, "/gz") {
			opts = append(opts, framework.Compressed())
		}
		if _, err := c.Create(ctx, p, v, opts...); err != nil {
			t.Fatalf("write %s: %v", p, err)
		}
	}
	// The roots hold data, compressed in the compressed tree: Curator's
	// caches cannot decompress the empty data of a parent made on the way.
	put(base+"/plain", []byte("plain root"))
	put(base+"/gz", []byte("compressed root"))
	for i, v := range values {
		put(fmt.Sprintf("%s/plain/n%d", base, i), v)
		put(fmt.Sprintf("%s/gz/n%d", base, i), v)
	}
	put(base+"/gz/n1/below", []byte("a grandchild"))

	java := curatorjava.StartDriver(t, zkAddr)
	je := collectJava(t, java)
	ge := &goEvents{byID: map[string][]string{}, more: make(chan struct{}, 1)}
	node := base + "/gz/n1"
	kinds := []struct {
		id, kind, root, data string
		opts                 []cache.Option
		listener             func(cache.Event)
	}{
		{"curator", "curator", base + "/gz", "gzip", []cache.Option{cache.CompressedData()}, cache.Handlers{
			Creates:     func(n cache.Node) { ge.add("curator", "NODE_CREATED", n.Path, n.Data, true) },
			Changes:     func(_, n cache.Node) { ge.add("curator", "NODE_CHANGED", n.Path, n.Data, true) },
			Deletes:     func(n cache.Node) { ge.add("curator", "NODE_DELETED", n.Path, n.Data, true) },
			Initialized: func() { ge.add("curator", "INITIALIZED", "", nil, true) },
		}.Listener()},
		{"tree", "tree", base + "/plain", "plain", nil, cache.ForTree(func(ev cache.TreeEvent) {
			ge.add("tree", ev.Type.String(), ev.Node.Path, ev.Node.Data, true)
		})},
		{"children", "children", base + "/gz", "gzip", []cache.Option{cache.CompressedData(), cache.WithMaxDepth(1)},
			cache.ForPathChildren(base+"/gz", func(ev cache.ChildEvent) {
				ge.add("children", ev.Type.String(), ev.Node.Path, ev.Node.Data, true)
			})},
		{"node", "node", node, "gzip", []cache.Option{cache.CompressedData(), cache.SingleNode()},
			cache.ForNode(node, func(n cache.Node, exists bool) {
				ge.add("node", "NODE_CHANGED", n.Path, n.Data, exists)
			})},
	}
	for _, k := range kinds {
		java.MustDo(fmt.Sprintf("cache %s %s %s %s", k.id, k.kind, k.root, k.data))
		ch := cache.New(c, k.root, k.opts...)
		t.Cleanup(func() { _ = ch.Close() })
		defer ch.Listen(k.listener)()
		if err := ch.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Events expected in all, by cache: the trees hold 7 and 6 nodes, the
	// children cache 5 children, and each load ends with INITIALIZED
	// (NodeCache has none).
	want := map[string]int{"curator": 8, "tree": 7, "children": 6, "node": 1}
	sameEvents(t, "initial load", je, ge, want)
	for i, v := range values {
		for _, root := range []string{"/plain", "/gz"} {
			p := fmt.Sprintf("%s%s/n%d", base, root, i)
			if got := java.MustDo("cget tree " + p); root == "/plain" && got != hexOf(v) {
				t.Fatalf("Curator's TreeCache of %s: %.40s..., Go wrote %d bytes", p, got, len(v))
			}
			if got := java.MustDo("cget curator " + p); root == "/gz" && got != hexOf(v) {
				t.Fatalf("Curator's compressed CuratorCache of %s: %.40s..., Go wrote %d bytes", p, got, len(v))
			}
		}
	}

	steps := []struct {
		name string
		do   func()
		more map[string]int // events each cache reports
	}{
		{"set", func() {
			for i, v := range values {
				put(fmt.Sprintf("%s/plain/n%d", base, i), slices.Concat(v, []byte("+1")))
				put(fmt.Sprintf("%s/gz/n%d", base, i), slices.Concat(v, []byte("+1")))
			}
		}, map[string]int{"curator": 5, "tree": 5, "children": 5, "node": 1}},
		{"create", func() {
			put(base+"/plain/new/deep", []byte("new"))
			put(base+"/gz/new", []byte("new"))
		}, map[string]int{"curator": 1, "tree": 2, "children": 1}},
		{"delete", func() {
			for _, p := range []string{base + "/plain/n2", base + "/gz/n2", base + "/plain/new", node} {
				if err := c.Delete(ctx, p, framework.DeletingChildren()); err != nil {
					t.Fatal(err)
				}
			}
		}, map[string]int{"curator": 3, "tree": 3, "children": 2, "node": 1}},
		{"recreate", func() { put(node, []byte("again")) }, map[string]int{"curator": 1, "children": 1, "node": 1}},
	}
	for _, s := range steps {
		s.do()
		for id, n := range s.more {
			want[id] += n
		}
		sameEvents(t, s.name, je, ge, want)
	}
	for id := range want {
		java.MustDo("cclose " + id)
	}
}
