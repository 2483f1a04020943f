package main

import (
	"context"
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/zktest"
)

// revoke asks Curator's and our revocable holders to release; locks ls
// shows the request.
func TestRevoke(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	java := curatorjava.StartDriver(t, e.zk)

	java.MustDo("mutex j /locks/java")
	java.MustDo("revocable j")
	if got := java.MustDo("acquire j 10000"); got != "true" {
		t.Fatalf("java acquire: %s", got)
	}
	node := only(t, only(t, e.lsJSON("/locks/java"), "locks").Holders, "holders").Node
	r := e.run("revoke", node).ok(t)
	if !strings.Contains(r.stdout, node+": revocation requested") {
		t.Fatalf("stdout %q", r.stdout)
	}
	if err := java.WaitEvent("revoked j", testkit.Deadline); err != nil {
		t.Fatal(err)
	}

	asked := make(chan struct{})
	m := mutex.New(e.client, "/locks/go", mutex.Revocable(func(*mutex.Mutex) { close(asked) }))
	if err := m.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	// A holder that does not react still shows the request.
	plain := mutex.New(e.connect(), "/locks/plain")
	if err := plain.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	e.run("revoke", plain.Node()).ok(t)
	if h := only(t, only(t, e.lsJSON("/locks/plain"), "locks").Holders, "holders"); !h.Revoking {
		t.Fatalf("holder %+v: revoking not shown", h)
	}
	e.run("revoke", m.Node()).ok(t)
	testkit.WaitClosed(t, asked, "the revocation callback")
	_ = m.Release(ctx)
	_ = plain.Release(ctx)
}

// break --force deletes a holder's node after confirmation: the next
// waiter gets the lock.
func TestBreak(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	const path = "/locks/stuck"
	m1 := mutex.New(e.client, path)
	if err := m1.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	m2 := mutex.New(e.connect(), path)
	got := make(chan error, 1)
	go func() { got <- m2.Acquire(ctx) }()
	e.waitChildren(path, 2)

	// Not confirmed: nothing happens.
	r := e.runIn("no\n", "--zk", e.zk, "break", "--force", m1.Node())
	if r.code != 1 || !strings.Contains(r.stderr, "not confirmed: nothing deleted") || !strings.Contains(r.stdout, "owner session "+hex(e.client.SessionID())) {
		t.Fatalf("%+v", r)
	}
	if _, err := e.client.Exists(ctx, m1.Node()); err != nil {
		t.Fatalf("node gone without confirmation: %v", err)
	}
	r = e.runIn("yes\n", "--zk", e.zk, "break", "--force", m1.Node())
	if r.code != 0 || !strings.Contains(r.stdout, m1.Node()+": deleted") || !strings.Contains(r.stderr, "Type yes to delete") {
		t.Fatalf("%+v", r)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if h := only(t, e.lsJSON(path), "locks"); len(h.Holders) != 1 || h.Holders[0].Node != m2.Node() || len(h.Waiters) != 0 {
		t.Fatalf("after break: %+v", h)
	}
	// --yes skips the question.
	e.run("break", "--force", "--yes", m2.Node()).ok(t)
	_ = m1.Release(context.WithoutCancel(ctx))
	_ = m2.Release(context.WithoutCancel(ctx))
}

// locks watch prints a new view on each change, from watches.
func TestLocksWatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	const path = "/locks/watched"
	m1 := mutex.New(e.client, path)
	if err := m1.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	p := e.start("--zk", e.zk, "--json", "locks", "watch", path)
	view := func(what string, holders, waiters int) inspect.Lock {
		var l inspect.Lock
		p.line(t, what, func(s string) bool {
			var doc struct{ Locks []inspect.Lock }
			if err := json.Unmarshal([]byte(s), &doc); err != nil {
				t.Fatalf("bad line %q: %v", s, err)
			}
			if len(doc.Locks) == 1 && len(doc.Locks[0].Holders) == holders && len(doc.Locks[0].Waiters) == waiters {
				l = doc.Locks[0]
				return true
			}
			return false
		})
		return l
	}
	view("the first view", 1, 0)
	b := e.connect()
	m2 := mutex.New(b, path)
	got := make(chan error, 1)
	go func() { got <- m2.Acquire(ctx) }()
	if l := view("a waiter", 1, 1); l.Waiters[0].Session != hex(b.SessionID()) {
		t.Fatalf("waiter %+v", l.Waiters[0])
	}
	if err := m1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if l := view("the hand-over", 1, 0); l.Holders[0].Session != hex(b.SessionID()) {
		t.Fatalf("holder %+v", l.Holders[0])
	}
	_ = m2.Release(ctx)
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	if code := p.wait(t); code != 0 {
		t.Fatalf("watch exit %d on SIGINT (stderr %q)", code, p.stderr.String())
	}
}

// orphans lists the node of a session that is gone but not expired, and an
// empty persistent parent.
func TestOrphans(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	if _, err := e.client.Create(ctx, "/old/lock-dir/child", nil, framework.CreatingParents()); err != nil {
		t.Fatal(err)
	}
	if err := e.client.Delete(ctx, "/old/lock-dir/child"); err != nil {
		t.Fatal(err)
	}
	proxy := zktest.NewProxy(t, addr)
	gone := testkit.Connect(t, proxy.Addr(), e.ns, framework.WithSessionTimeout(30*time.Second))
	m := mutex.New(gone, "/locks/orphaned")
	if err := m.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	live := mutex.New(e.client, "/locks/live")
	if err := live.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	node, session := m.Node(), hex(gone.SessionID())
	proxy.Cut()

	type doc struct {
		Orphans  []inspect.Orphan `json:"orphans"`
		Sessions string           `json:"sessions"`
	}
	var d doc
	// The server notices the closed connection on its own time.
	testkit.Eventually(t, "the cut session's node is an orphan", func() bool {
		out := e.run("--json", "orphans", "/").ok(t).stdout
		d = doc{}
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		for _, o := range d.Orphans {
			if o.Node == node {
				return true
			}
		}
		return false
	})
	if len(d.Orphans) != 2 || d.Sessions != "complete" {
		t.Fatalf("orphans %+v", d)
	}
	if o := d.Orphans[0]; o.Node != node || o.Reason != inspect.OrphanSessionGone || o.Session != session {
		t.Fatalf("first orphan %+v, want %s of %s", o, node, session)
	}
	if o := d.Orphans[1]; o.Node != "/old/lock-dir" || o.Reason != inspect.OrphanEmptyParent {
		t.Fatalf("second orphan %+v", o)
	}
	// locks ls says the holder's session is not connected.
	if h := only(t, only(t, e.lsJSON("/locks/orphaned"), "locks").Holders, "holders"); h.Connected != inspect.Disconnected {
		t.Fatalf("holder %+v", h)
	}
	_ = live.Release(ctx)
}
