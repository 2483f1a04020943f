package main

import (
	"context"
	"strings"
	"testing"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/barrier"
)

// barrier show reads Curator's DistributedBarrier, closed and open, and a
// double barrier whose members are Curator's and ours: who is in it, with
// its session, and who has passed Enter by the round rule.
func TestBarrierShow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	java := curatorjava.StartDriver(t, e.zk)

	java.MustDo("barrier jb /gate")
	java.MustDo("bset jb")
	var doc barrierDoc
	decode(t, e.run("--json", "barrier", "show", "/gate").ok(t).stdout, &doc)
	if doc.Kind != kindBarrier || doc.State != "closed" || doc.Created == nil {
		t.Fatalf("a set DistributedBarrier: %+v", doc)
	}
	if out := e.run("barrier", "show", "/gate").ok(t).stdout; !strings.HasPrefix(out, "/gate  barrier  closed (since ") {
		t.Fatalf("barrier show, closed:\n%s", out)
	}
	java.MustDo("bremove jb")
	if out := e.run("barrier", "show", "/gate").ok(t).stdout; out != "/gate  barrier  open (no node)\n" {
		t.Fatalf("barrier show, open:\n%s", out)
	}

	// A round of three: Curator's member and one of ours wait.
	java.MustDo("dbarrier jd /job 3")
	java.MustDo("enter jd -1")
	ours := barrier.NewDouble(e.client, "/job", 3)
	entered := make(chan error, 2)
	go func() { entered <- ours.Enter(ctx) }()
	e.waitChildren("/job", 2)
	decode(t, e.run("--json", "barrier", "show", "/job", "--size", "3").ok(t).stdout, &doc)
	if doc.Kind != kindDouble || doc.State != "waiting" || doc.Size != 3 || len(doc.Members) != 2 || doc.Ready != nil ||
		doc.Sessions != "complete" {
		t.Fatalf("a waiting double barrier: %+v", doc)
	}
	sessions := map[string]bool{}
	for _, m := range doc.Members {
		if m.Entered || m.Connected != inspect.Connected {
			t.Fatalf("waiting member %+v", m)
		}
		sessions[m.Session] = true
	}
	if !sessions[hex(e.client.SessionID())] || len(sessions) != 2 {
		t.Fatalf("member sessions %v, want ours (%s) and Curator's", sessions, hex(e.client.SessionID()))
	}
	out := e.run("barrier", "show", "/job", "--size", "3").ok(t).stdout
	if !strings.HasPrefix(out, "/job  double barrier  waiting, 2 members of 3, no ready node\nwaiting for 1 more\nMEMBER ") {
		t.Fatalf("barrier show, waiting:\n%s", out)
	}

	// The third arrives: all pass.
	third := barrier.NewDouble(e.connect(), "/job", 3)
	go func() { entered <- third.Enter(ctx) }()
	if err := java.WaitEvent("entered jd true", testkit.Deadline); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-entered; err != nil {
			t.Fatal(err)
		}
	}
	decode(t, e.run("--json", "barrier", "show", "/job").ok(t).stdout, &doc)
	if doc.State != "entered" || len(doc.Members) != 3 || doc.Ready == nil || doc.Ready.Stale {
		t.Fatalf("an entered double barrier: %+v", doc)
	}
	for _, m := range doc.Members {
		if !m.Entered {
			t.Fatalf("member %+v of an entered round not entered", m)
		}
	}
	out = e.run("barrier", "show", "/job").ok(t).stdout
	if !strings.HasPrefix(out, "/job  double barrier  entered, 3 members, ready ") || strings.Contains(out, "stale") {
		t.Fatalf("barrier show, entered:\n%s", out)
	}
	java.MustDo("leave jd -1")
	left := make(chan error, 2)
	go func() { left <- ours.Leave(ctx) }()
	go func() { left <- third.Leave(ctx) }()
	for range 2 {
		if err := <-left; err != nil {
			t.Fatal(err)
		}
	}
	if err := java.WaitEvent("left jd true", testkit.Deadline); err != nil {
		t.Fatal(err)
	}
}

// A ready node older than every member (left by a round whose members
// crashed) is shown as stale, and lets nobody through.
func TestBarrierShowStaleReady(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	if _, err := e.client.Create(ctx, "/job/ready", nil, framework.CreatingParentContainers()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.Delete(context.WithoutCancel(ctx), "/job/ready") })
	if _, err := e.client.Create(ctx, "/job/member-1", nil, framework.WithMode(framework.Ephemeral)); err != nil {
		t.Fatal(err)
	}
	var doc barrierDoc
	decode(t, e.run("--json", "barrier", "show", "/job").ok(t).stdout, &doc)
	if doc.Kind != kindDouble || doc.State != "waiting" || doc.Ready == nil || !doc.Ready.Stale ||
		len(doc.Members) != 1 || doc.Members[0].Entered || doc.Members[0].Node != "member-1" {
		t.Fatalf("a stale ready node: %+v", doc)
	}
	if out := e.run("barrier", "show", "/job").ok(t).stdout; !strings.Contains(out, "(stale: older than every member)") {
		t.Fatalf("barrier show, stale ready:\n%s", out)
	}
	if r := e.run("barrier", "show", "/job", "--size", "-1"); r.code != exitUsage {
		t.Fatalf("--size -1: exit %d, want %d", r.code, exitUsage)
	}
}
