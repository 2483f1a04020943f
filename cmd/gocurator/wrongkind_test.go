package main

import (
	"context"
	"strings"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/discovery"
	"github.com/gocurator/curator/recipes/group"
	"github.com/gocurator/curator/recipes/leader"
	"github.com/gocurator/curator/recipes/semaphore"
)

// group ls lists a group and nothing else: service instances and leader
// latch nodes were listed as members (issue 36). Every command pointed at
// another recipe's path says what it found there and exits 65, running
// nothing.
func TestWrongKind(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	d := discovery.New(e.client, "/services")
	if err := d.Register(ctx, discovery.Instance{Name: "orders", ID: "o-1", Address: "10.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	if _, err := leader.New(e.connect(), "/election", leader.WithID("a")).Campaign(ctx); err != nil {
		t.Fatal(err)
	}
	m := group.New(e.client, "/workers", "go-1", []byte("10.0.0.1:8080"))
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	for _, p := range []string{"/plain", "/plain/a", "/empty"} {
		if _, err := e.client.Create(ctx, p, nil); err != nil {
			t.Fatal(err)
		}
	}

	// What works still works: a group, and an empty one.
	if out := e.run("group", "ls", "/workers").ok(t).stdout; !strings.HasPrefix(out, "/workers  1 member\n") {
		t.Fatalf("group ls of a group:\n%s", out)
	}
	if out := e.run("group", "ls", "/empty").ok(t).stdout; out != "/empty  0 members\n" {
		t.Fatalf("group ls of an empty directory:\n%s", out)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"group ls of a service", []string{"group", "ls", "/services/orders"},
			"/services/orders is a registered service (1 instance), not a group (see gocurator services ls orders --base /services)"},
		{"group ls of a discovery base", []string{"group", "ls", "/services"}, "/services is a service discovery base path"},
		{"group ls of a latch", []string{"group", "ls", "/election"},
			"/election is a leader latch (1 node), not a group (see gocurator leader show /election)"},
		{"group ls of plain nodes", []string{"group", "ls", "/plain"}, "/plain is no recipe (children: a), not a group"},
		{"group ls of a member", []string{"group", "ls", "/workers/go-1"},
			"/workers/go-1 is a member of the group at /workers, not a group (see gocurator group ls /workers)"},
		{"locks ls of a group", []string{"locks", "ls", "/workers"},
			"/workers is a group (1 member), not a lock, semaphore or election (see gocurator group ls /workers)"},
		{"locks ls of plain nodes", []string{"locks", "ls", "/plain"},
			"/plain is no recipe (children: a), not a lock, semaphore or election; use -r to search below it"},
		{"leader show of a group", []string{"leader", "show", "/workers"}, "/workers is a group (1 member), not a lock, semaphore or election"},
		{"semaphore leases of a service", []string{"semaphore", "leases", "/services/orders"}, "/services/orders is a registered service (1 instance)"},
		{"atomic get of a group", []string{"atomic", "get", "/workers"}, "/workers is a group (1 member), not an atomic counter"},
		{"services ls of a latch", []string{"services", "ls", "election", "--base", "/"},
			"/election is a leader latch (1 node), not a registered service (see gocurator leader show /election)"},
		{"services show in a latch", []string{"services", "show", "election", "a", "--base", "/"}, "/election is a leader latch"},
		{"services ls with a service for base", []string{"services", "ls", "--base", "/services/orders"},
			"/services/orders is a registered service (1 instance), not a service discovery base path"},
		{"barrier show of a group", []string{"barrier", "show", "/workers"}, "/workers is a group (1 member), not a barrier (see gocurator group ls /workers)"},
		{"barrier show of a latch", []string{"barrier", "show", "/election"}, "/election is a leader latch (1 node), not a barrier"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.run(tc.args...)
			if r.code != exitLayout || r.stdout != "" || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("exit %d (want %d), stdout %q, stderr %q (want %q)", r.code, exitLayout, r.stdout, r.stderr, tc.want)
			}
			if strings.Count(r.stderr, "\n") != 1 {
				t.Fatalf("stderr is not one line: %q", r.stderr)
			}
		})
	}
}

// orphans does not offer a busy V2 semaphore's locks/ gate for deletion:
// empty between two acquires, it is the semaphore's (issue 36).
func TestOrphansBusyV2Semaphore(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	if _, err := semaphore.New(e.connect(), "/sem", 3, semaphore.CuratorV2()).AcquireN(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if n := len(testkit.Children(t, e.client, "/sem/locks")); n != 0 {
		t.Fatalf("the gate has %d nodes after the acquire, want none", n)
	}
	// An empty directory of no recipe in use is still reported.
	if _, err := e.client.Create(ctx, "/old/job-1", nil, framework.CreatingParents()); err != nil {
		t.Fatal(err)
	}
	if err := e.client.Delete(ctx, "/old/job-1"); err != nil {
		t.Fatal(err)
	}
	out := e.run("orphans", "/").ok(t).stdout
	if strings.Contains(out, "/sem/locks") || !strings.Contains(out, "empty-parent  /old ") {
		t.Fatalf("orphans:\n%s", out)
	}
}
