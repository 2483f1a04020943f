package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/recipes/shared"
)

// A V2 semaphore of 2 (max from a SharedCount): Curator holds a lease, Go
// holds one, a third acquirer (Go) waits holding the gate.
func TestSemaphoreLeasesV2WithJavaHolder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	java := curatorjava.StartDriver(t, e.zk)
	const path, countPath = "/semaphores/exports", "/config/exports-max"

	count := shared.NewCount(e.client, countPath, 2)
	if err := count.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer count.Close()
	java.MustDo("semv2 s " + path + " 2")
	javaLease := java.MustDo("lease s 10000")
	if !strings.HasPrefix(javaLease, path+"/leases/") {
		t.Fatalf("java lease %q", javaLease)
	}
	b := e.connect()
	goLease, err := semaphore.New(b, path, 0, semaphore.CuratorV2(), semaphore.WithMaxLeasesFrom(count)).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := e.connect()
	waitCtx, cancel := context.WithCancel(ctx)
	waiting := make(chan error, 1)
	go func() {
		_, err := semaphore.New(c, path, 2, semaphore.CuratorV2()).Acquire(waitCtx)
		waiting <- err
	}()
	e.waitChildren(path+"/leases", 3)
	e.waitChildren(path+"/locks", 1)

	r := e.run("--json", "semaphore", "leases", path, "--count", countPath).ok(t)
	var l inspect.Lock
	if err := json.Unmarshal([]byte(r.stdout), &l); err != nil {
		t.Fatalf("%v:\n%s", err, r.stdout)
	}
	if l.Kind != inspect.KindSemaphoreV2 || l.Max != 2 || l.MaxSource != "shared count "+countPath {
		t.Fatalf("got %+v", l)
	}
	if len(l.Holders) != 2 || l.Holders[0].Node != javaLease || l.Holders[1].Node != goLease.Node() ||
		l.Holders[1].Session != hex(b.SessionID()) || l.Holders[0].Role != inspect.RoleLease {
		t.Fatalf("holders %+v; want Java's %s then ours %s", l.Holders, javaLease, goLease.Node())
	}
	if len(l.Waiters) != 2 || l.Waiters[0].Role != inspect.RoleLease || l.Waiters[1].Role != inspect.RoleGate ||
		l.Waiters[0].Session != hex(c.SessionID()) || l.Waiters[1].Session != hex(c.SessionID()) {
		t.Fatalf("waiters %+v, want the third acquirer's lease and gate node", l.Waiters)
	}

	// --max gives the same; locks ls shows the layout without a maximum.
	table := e.run("semaphore", "leases", path, "--max", "2").ok(t).stdout
	if !strings.Contains(table, "semaphore-v2 (max 2)  2 holders, 2 waiters") {
		t.Fatalf("table:\n%s", table)
	}
	ls := e.lsJSON(path)
	if len(ls) != 1 || ls[0].Kind != inspect.KindSemaphoreV2 || ls[0].Max != 0 || len(ls[0].Holders) != 2 || len(ls[0].Waiters) != 2 {
		t.Fatalf("locks ls: %+v", ls)
	}

	cancel()
	if err := <-waiting; err == nil {
		t.Fatal("the third acquire succeeded")
	}
	_ = goLease.Release(context.WithoutCancel(ctx))
	// exec -n 2 --v2 takes the lease Curator leaves free.
	r = e.run("exec", "-n", "2", "--v2", path, "--", "sh", "-c", `echo "$GOCURATOR_LOCK_NODE"`).ok(t)
	if !strings.HasPrefix(r.stdout, path+"/leases/_c_") {
		t.Fatalf("exec -n 2 --v2 node %q", r.stdout)
	}
	java.MustDo("return " + javaLease)
}

// -n N holds a lease of a V1 semaphore; semaphore leases --max reads it.
func TestSemaphoreLeasesV1(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	const path = "/semaphores/v1"
	s := semaphore.New(e.client, path, 2, semaphore.CuratorV1())
	l1, err := s.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := semaphore.New(e.connect(), path, 2, semaphore.CuratorV1()).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// exec -n 2 must wait: run it with a short --wait.
	r := e.run("exec", "-n", "2", "--wait", "300ms", path, "--", "true")
	if r.code != exitNotAcquired || !strings.Contains(r.stderr, "not acquired within 300ms") {
		t.Fatalf("exec -n 2 with both leases taken: %+v", r)
	}
	_ = l2.Release(ctx)
	r = e.run("exec", "-n", "2", path, "--", "sh", "-c", `echo "$GOCURATOR_LOCK_NODE"`).ok(t)
	if !strings.HasPrefix(r.stdout, path+"/_c_") {
		t.Fatalf("exec -n 2 node %q", r.stdout)
	}
	var v1 inspect.Lock
	out := e.run("--json", "semaphore", "leases", path, "--max", "2").ok(t).stdout
	if err := json.Unmarshal([]byte(out), &v1); err != nil {
		t.Fatal(err)
	}
	if v1.Kind != inspect.KindSemaphoreV1 || v1.Max != 2 || len(v1.Holders) != 1 || v1.Holders[0].Node != l1.Node() {
		t.Fatalf("got %+v", v1)
	}
	r = e.run("semaphore", "leases", path)
	if r.code != 1 || !strings.Contains(r.stderr, "give --max or --count") {
		t.Fatalf("without a max: %+v", r)
	}
	_ = l1.Release(ctx)
}
