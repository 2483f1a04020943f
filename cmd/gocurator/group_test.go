package main

import (
	"context"
	"strings"
	"testing"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/group"
)

// group ls lists the members of a group, Go's (recipes/group) and Java's
// (Curator's GroupMember), with payloads and owner sessions, connected.
func TestGroupLs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	java := curatorjava.StartDriver(t, e.zk)
	java.MustDo("member j /workers java-1 jpayload")
	t.Cleanup(func() { _, _ = java.Do("memberClose j") })
	m := group.New(e.client, "/workers", "go-1", []byte("10.0.0.1:8080"))
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	testkit.Eventually(t, "both members", func() bool { return len(testkit.Children(t, e.client, "/workers")) == 2 })

	var doc groupDoc
	decode(t, e.run("--json", "group", "ls", "/workers").ok(t).stdout, &doc)
	if doc.Path != "/workers" || len(doc.Members) != 2 || doc.Sessions != "complete" {
		t.Fatalf("group ls --json: %+v", doc)
	}
	goM, javaM := doc.Members[0], doc.Members[1]
	if goM.ID != "go-1" || goM.Payload != "10.0.0.1:8080" || goM.Session != inspect.SessionHex(e.client.SessionID()) || goM.Connected != "yes" {
		t.Fatalf("go member %+v", goM)
	}
	if javaM.ID != "java-1" || javaM.Payload != "jpayload" || javaM.Session == "" || javaM.Connected != "yes" {
		t.Fatalf("java member %+v", javaM)
	}
	out := e.run("group", "ls", "/workers").ok(t).stdout
	if !strings.HasPrefix(out, "/workers  2 members\n") || !strings.Contains(out, "go-1") || !strings.Contains(out, "jpayload") {
		t.Fatalf("group ls:\n%s", out)
	}
	if r := e.run("group", "ls", "/nope"); r.code == 0 || !strings.Contains(r.stderr, "no group there") {
		t.Fatalf("group ls of a missing path: %+v", r)
	}
	if r := e.run("group", "ls", "nope"); r.code != 2 {
		t.Fatalf("group ls of a relative path: exit %d", r.code)
	}
}
