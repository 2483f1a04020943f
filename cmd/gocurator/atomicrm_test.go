package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/atomic"
)

// A counter a Go handle has written keeps the handle's writer node under
// it, so the plain delete a Java operator (zkCli, Curator) makes fails
// with "Node not empty" (issue 36). atomic rm deletes both at once, and
// refuses anything that is not a counter, deleting nothing.
func TestAtomicRm(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	n := atomic.NewLong(e.connect(), "/counters/orders")
	t.Cleanup(func() { _ = n.Close(ctx) })
	if _, err := n.Add(ctx, 42); err != nil {
		t.Fatal(err)
	}
	if err := e.client.Delete(ctx, "/counters/orders"); !errors.Is(err, zk.ErrNotEmpty) {
		t.Fatalf("a plain delete of a Go-written counter: %v, want %v", err, zk.ErrNotEmpty)
	}
	var doc atomicRmDoc
	decode(t, e.run("--json", "atomic", "rm", "/counters/orders").ok(t).stdout, &doc)
	if !doc.Deleted || doc.Value != 42 || len(doc.Writers) != 1 || !strings.HasPrefix(doc.Writers[0].Node, "/counters/orders/writer-") {
		t.Fatalf("atomic rm --json: %+v", doc)
	}
	if st, err := e.client.Exists(ctx, "/counters/orders"); err != nil || st != nil {
		t.Fatalf("after atomic rm: %v %v", st, err)
	}
	// The handle still open makes it again from 0, as Curator's would.
	if v, err := n.Add(ctx, 1); err != nil || v != 1 {
		t.Fatalf("the open handle's next update: %d %v", v, err)
	}
	if out := e.run("atomic", "rm", "/counters/orders").ok(t).stdout; out != "deleted /counters/orders (value 1, 1 writer node)\n" {
		t.Fatalf("atomic rm: %q", out)
	}
	// A Curator counter (no child) and a 4-byte one go too.
	if _, err := e.client.Create(ctx, "/counters/java", []byte{0, 0, 0, 0, 0, 0, 0, 7}, framework.CreatingParents()); err != nil {
		t.Fatal(err)
	}
	if out := e.run("atomic", "rm", "/counters/java").ok(t).stdout; out != "deleted /counters/java (value 7, 0 writer nodes)\n" {
		t.Fatalf("atomic rm of a childless counter: %q", out)
	}

	// Not counters: exit 65, nothing deleted.
	for _, n := range []struct {
		path string
		data []byte
	}{{"/bad/text", []byte("abc")}, {"/bad/dir", nil}, {"/bad/dir/child", []byte("x")}} {
		if _, err := e.client.Create(ctx, n.path, n.data, framework.CreatingParents()); err != nil {
			t.Fatal(err)
		}
	}
	for p, want := range map[string]string{
		"/bad/text": "/bad/text is no recipe (a node with 3 bytes of data), not an atomic counter; nothing deleted",
		"/bad/dir":  "/bad/dir is no recipe (children: child), not an atomic counter; nothing deleted",
	} {
		r := e.run("atomic", "rm", p)
		if r.code != exitLayout || r.stderr != "gocurator: "+want+"\n" {
			t.Fatalf("atomic rm %s: exit %d, stderr %q, want %q", p, r.code, r.stderr, want)
		}
		if st, err := e.client.Exists(ctx, p); err != nil || st == nil {
			t.Fatalf("%s deleted after a refusal: %v", p, err)
		}
	}
	if r := e.run("atomic", "rm", "/counters/none"); r.code != 1 || r.stderr != "gocurator: /counters/none: no such node\n" {
		t.Fatalf("atomic rm of a missing node: %+v", r)
	}
}
