package main

import (
	"context"
	"strings"
	"testing"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/recipes/rwlock"
)

// javaAsync runs a blocking driver command on a goroutine.
func javaAsync(j *curatorjava.Driver, cmd string) <-chan string {
	out := make(chan string, 1)
	go func() {
		got, err := j.Do(cmd)
		if err != nil {
			got = "error: " + err.Error()
		}
		out <- got
	}()
	return out
}

// A Go holder, a Curator (Java) waiter and a Go waiter on one mutex:
// holders first, then waiters in the order they queued, tied to their
// sessions; after the holder goes, the Java waiter is the holder.
func TestLocksLsMutexWithJavaWaiter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	java := curatorjava.StartDriver(t, e.zk)
	const path = "/locks/orders"

	a := e.client
	m1 := mutex.New(a, path)
	if err := m1.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	java.MustDo("mutex j " + path)
	jgot := javaAsync(java, "acquire j 30000")
	e.waitChildren(path, 2)
	b := e.connect()
	m2 := mutex.New(b, path)
	m2done := make(chan error, 1)
	go func() { m2done <- m2.Acquire(ctx) }()
	e.waitChildren(path, 3)

	locks := e.lsJSON(path)
	if len(locks) != 1 {
		t.Fatalf("want one lock, got %+v", locks)
	}
	l := locks[0]
	if l.Path != path || l.Kind != inspect.KindMutex || len(l.Holders) != 1 || len(l.Waiters) != 2 {
		t.Fatalf("got %+v", l)
	}
	h := l.Holders[0]
	if h.Node != m1.Node() || h.Session != hex(a.SessionID()) || h.Token != m1.FencingToken() ||
		h.Host != string(a.DefaultData()) || h.Client != inspect.ClientCurator || h.Connected != inspect.Connected {
		t.Fatalf("holder %+v; want node %s session %s token %d host %q", h, m1.Node(), hex(a.SessionID()), m1.FencingToken(), a.DefaultData())
	}
	javaSession := l.Waiters[0].Session
	if javaSession == hex(a.SessionID()) || javaSession == hex(b.SessionID()) || l.Waiters[0].Connected != inspect.Connected {
		t.Fatalf("first waiter should be Curator's session: %+v", l.Waiters[0])
	}
	if w := l.Waiters[1]; w.Session != hex(b.SessionID()) || w.Token <= l.Waiters[0].Token || w.Addr == "" {
		t.Fatalf("second waiter %+v, want session %s", w, hex(b.SessionID()))
	}

	// The table says the same, in the same order.
	table := e.run("locks", "ls", path).ok(t).stdout
	rows := strings.Split(strings.TrimSpace(table), "\n")
	if len(rows) != 5 || !strings.HasPrefix(rows[0], path+"  mutex  1 holder, 2 waiters") {
		t.Fatalf("table:\n%s", table)
	}
	for i, want := range []struct{ state, session string }{
		{"holder", hex(a.SessionID())}, {"waiter", javaSession}, {"waiter", hex(b.SessionID())},
	} {
		f := strings.Fields(rows[2+i])
		if f[1] != want.state || f[5] != want.session || f[len(f)-1] != "yes" {
			t.Fatalf("row %d %q, want %s of %s", i, rows[2+i], want.state, want.session)
		}
	}

	// Hand-over: Curator is next.
	if err := m1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if got := <-jgot; got != "true" {
		t.Fatalf("java acquire: %s", got)
	}
	l = only(t, e.lsJSON(path), "locks")
	if len(l.Holders) != 1 || l.Holders[0].Session != javaSession || len(l.Waiters) != 1 || l.Waiters[0].Session != hex(b.SessionID()) {
		t.Fatalf("after release: %+v", l)
	}
	java.MustDo("release j")
	if err := <-m2done; err != nil {
		t.Fatal(err)
	}
	_ = m2.Release(context.WithoutCancel(ctx))
}

// A Go reader holds, a Curator writer waits, a Go reader waits behind the
// writer (readers do not overtake a queued writer).
func TestLocksLsReadWrite(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	java := curatorjava.StartDriver(t, e.zk)
	const path = "/locks/catalog"

	r1 := rwlock.New(e.client, path)
	if err := r1.ReadLock().Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	java.MustDo("rwlock rw " + path)
	jgot := javaAsync(java, "acquire rw.write 30000")
	e.waitChildren(path, 2)
	b := e.connect()
	r2 := rwlock.New(b, path)
	r2done := make(chan error, 1)
	go func() { r2done <- r2.ReadLock().Acquire(ctx) }()
	e.waitChildren(path, 3)

	l := only(t, e.lsJSON(path), "locks")
	if l.Kind != inspect.KindReadWrite || len(l.Holders) != 1 || len(l.Waiters) != 2 {
		t.Fatalf("got %+v", l)
	}
	if h := l.Holders[0]; h.Role != inspect.RoleRead || h.Node != r1.ReadLock().Node() || h.Token != r1.ReadLock().FencingToken() {
		t.Fatalf("holder %+v", h)
	}
	if w := l.Waiters[0]; w.Role != inspect.RoleWrite || w.Client != inspect.ClientCurator || w.Session == hex(b.SessionID()) {
		t.Fatalf("first waiter %+v, want Curator's writer", w)
	}
	if w := l.Waiters[1]; w.Role != inspect.RoleRead || w.Session != hex(b.SessionID()) {
		t.Fatalf("second waiter %+v, want the Go reader", w)
	}
	table := e.run("locks", "ls", path).ok(t).stdout
	if !strings.Contains(table, "read-write  1 holder, 2 waiters") {
		t.Fatalf("table:\n%s", table)
	}

	if err := r1.ReadLock().Release(ctx); err != nil {
		t.Fatal(err)
	}
	if got := <-jgot; got != "true" {
		t.Fatalf("java write acquire: %s", got)
	}
	java.MustDo("release rw.write")
	if err := <-r2done; err != nil {
		t.Fatal(err)
	}
	_ = r2.ReadLock().Release(context.WithoutCancel(ctx))
}
