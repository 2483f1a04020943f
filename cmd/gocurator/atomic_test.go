package main

import (
	"strings"
	"testing"

	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/atomic"
)

// atomic get reads what Curator's DistributedAtomicLong and
// DistributedAtomicInteger write, and ours, as Curator reads it: a missing
// node is 0 (with a note), data too short for the number is an error.
func TestAtomicGet(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	java := curatorjava.StartDriver(t, e.zk)

	java.MustDo("along jl /counters/orders")
	java.MustDo("aadd jl -1234567890123")
	if out := e.run("atomic", "get", "/counters/orders").ok(t).stdout; out != "-1234567890123\n" {
		t.Fatalf("atomic get of Curator's long: %q", out)
	}
	var doc atomicDoc
	decode(t, e.run("--json", "atomic", "get", "/counters/orders").ok(t).stdout, &doc)
	if doc.Type != "long" || doc.Value != -1234567890123 || !doc.Exists || doc.Bytes != 8 || doc.Modified == nil {
		t.Fatalf("atomic get --json of Curator's long: %+v", doc)
	}

	java.MustDo("aint ji /counters/slots")
	java.MustDo("aadd ji -7")
	if out := e.run("atomic", "get", "/counters/slots", "--int").ok(t).stdout; out != "-7\n" {
		t.Fatalf("atomic get --int of Curator's integer: %q", out)
	}
	r := e.run("atomic", "get", "/counters/slots")
	if r.code != exitFailure || !strings.Contains(r.stderr, "want 8") || !strings.Contains(r.stderr, "try --int") {
		t.Fatalf("an integer read as a long: exit %d, stderr %q", r.code, r.stderr)
	}

	// Ours, read back by Curator and by gocurator alike.
	n := atomic.NewLong(e.client, "/counters/go")
	if _, err := n.Add(ctx, 41); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Increment(ctx); err != nil {
		t.Fatal(err)
	}
	java.MustDo("along jg /counters/go")
	if got := java.MustDo("aget jg"); got != "42" {
		t.Fatalf("Curator reads our long as %q", got)
	}
	decode(t, e.run("--json", "atomic", "get", "/counters/go").ok(t).stdout, &doc)
	if doc.Value != 42 || doc.Version != 1 {
		t.Fatalf("atomic get --json of our long: %+v", doc)
	}

	// Missing: 0, as Curator reads it, with a note.
	r = e.run("atomic", "get", "/counters/none")
	if r.code != 0 || r.stdout != "0\n" || !strings.Contains(r.stderr, "does not exist; Curator reads it as 0") {
		t.Fatalf("a missing counter: %+v", r)
	}
	doc = atomicDoc{}
	decode(t, e.run("--json", "atomic", "get", "/counters/none").ok(t).stdout, &doc)
	if doc.Exists || doc.Value != 0 || doc.Modified != nil {
		t.Fatalf("a missing counter --json: %+v", doc)
	}
	// Too short: Curator's corruption error.
	if _, err := e.client.Create(ctx, "/counters/bad", []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if r := e.run("atomic", "get", "/counters/bad", "--int"); r.code != exitFailure || !strings.Contains(r.stderr, "not a counter: 3 bytes of data, want 4") {
		t.Fatalf("3 bytes read as an integer: %+v", r)
	}
	if r := e.run("atomic", "get", "counters"); r.code != exitUsage {
		t.Fatalf("a relative path: exit %d, want %d", r.code, exitUsage)
	}
}
