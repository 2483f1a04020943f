package main

import (
	"strings"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/atomic"
	"github.com/gocurator/curator/recipes/group"
	"github.com/gocurator/curator/recipes/mutex"
)

// ls [-R], get and stat read as zkCli does (gzip data uncompressed, stat's
// fields), name the recipe of what they read, print --json, and exit 1
// for a missing node (issue 36: "ls, get, stat are unknown commands").
func TestOneShotReads(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	if _, err := e.client.Create(ctx, "/config/orders", []byte("hello"), framework.CreatingParents()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.Create(ctx, "/config/zipped", []byte("compressed text"), framework.Compressed()); err != nil {
		t.Fatal(err)
	}
	holder := e.connect()
	m := mutex.New(holder, "/locks/orders")
	if err := m.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	_, lockName := framework.SplitPath(m.Node())
	member := group.New(e.client, "/workers", "go-1", []byte("10.0.0.1:8080"))
	if err := member.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = member.Close(ctx) })
	counter := atomic.NewLong(e.client, "/counters/c")
	t.Cleanup(func() { _ = counter.Close(ctx) })
	if _, err := counter.Add(ctx, 42); err != nil {
		t.Fatal(err)
	}
	writer := only(t, testkit.Children(t, e.client, "/counters/c"), "writer node")

	// ls: names one per line, sorted, each recipe and part named.
	if out := e.run("ls", "/").ok(t).stdout; out != "config\ncounters\nlocks\nworkers  group\n" {
		t.Fatalf("ls /:\n%s", out)
	}
	if out := e.run("ls", "/locks").ok(t).stdout; out != "orders  mutex\n" {
		t.Fatalf("ls /locks:\n%s", out)
	}
	if out := e.run("ls", "/locks/orders").ok(t).stdout; out != lockName+"  mutex participant\n" {
		t.Fatalf("ls /locks/orders:\n%s", out)
	}
	wantR := strings.Join([]string{"/", "/config", "/config/orders", "/config/zipped",
		"/counters", "/counters/c  counter", "/counters/c/" + writer + "  counter writer", "/locks", "/locks/orders  mutex",
		"/locks/orders/" + lockName + "  mutex participant", "/workers  group", "/workers/go-1  group member"}, "\n") + "\n"
	if out := e.run("ls", "-R", "/").ok(t).stdout; out != wantR {
		t.Fatalf("ls -R /:\n%s\nwant:\n%s", out, wantR)
	}
	var ls lsDoc
	decode(t, e.run("--json", "ls", "/workers").ok(t).stdout, &ls)
	if ls.Kind != "group" || len(ls.Children) != 1 || ls.Children[0].Name != "go-1" || ls.Children[0].Part != "member" ||
		ls.Children[0].Recipe != "/workers" || ls.Children[0].Path != "/workers/go-1" {
		t.Fatalf("ls --json /workers: %+v", ls)
	}
	var lsR lsRDoc
	decode(t, e.run("--json", "ls", "-R", "/locks").ok(t).stdout, &lsR)
	if len(lsR.Nodes) != 2 || lsR.Nodes[0].Kind != "mutex" || lsR.Nodes[1].Part != "participant" {
		t.Fatalf("ls -R --json /locks: %+v", lsR)
	}

	// get: the data, uncompressed when gzip, the stat on request.
	if out := e.run("get", "/config/orders").ok(t).stdout; out != "hello\n" {
		t.Fatalf("get: %q", out)
	}
	r := e.run("get", "/config/zipped")
	if r.code != 0 || r.stdout != "compressed text\n" || !strings.Contains(r.stderr, "gzip data") {
		t.Fatalf("get of gzip data: %+v", r)
	}
	if out := e.run("get", "--raw", "/config/zipped").ok(t).stdout; !strings.HasPrefix(out, "\x1f\x8b") {
		t.Fatalf("get --raw: %q", out)
	}
	var g getDoc
	decode(t, e.run("--json", "get", "/config/zipped").ok(t).stdout, &g)
	if !g.Compressed || g.Data == nil || *g.Data != "compressed text" || g.StoredLength <= 0 || g.Stat.DataLength != int32(g.StoredLength) {
		t.Fatalf("get --json of gzip data: %+v", g)
	}
	out := e.run("get", "-s", "/config/orders").ok(t).stdout
	if !strings.HasPrefix(out, "hello\ncZxid = 0x") || !strings.Contains(out, "\ndataLength = 5\n") {
		t.Fatalf("get -s:\n%s", out)
	}
	r = e.run("get", m.Node())
	if r.code != 0 || !strings.Contains(r.stderr, "a participant of the mutex or V1 semaphore at /locks/orders") {
		t.Fatalf("get of a lock node: %+v", r)
	}
	r = e.run("get", "/counters/c")
	if r.code != 0 || r.stdout != "\x00\x00\x00\x00\x00\x00\x00\x2a" ||
		r.stderr != "gocurator: note: /counters/c is an atomic counter (1 writer node), value 42 (see gocurator atomic get /counters/c)\n" {
		t.Fatalf("get of a counter: %+v", r)
	}

	// stat: zkCli's fields in zkCli's order, then the recipe.
	out = e.run("stat", "/locks/orders").ok(t).stdout
	var fields []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		fields = append(fields, strings.SplitN(line, " = ", 2)[0])
	}
	want := "cZxid ctime mZxid mtime pZxid cversion dataVersion aclVersion ephemeralOwner dataLength numChildren recipe"
	if strings.Join(fields, " ") != want || !strings.Contains(out, "\nnumChildren = 1\n") || !strings.Contains(out, "recipe = mutex or V1 semaphore (1 node)") {
		t.Fatalf("stat:\n%s", out)
	}
	var st statPathDoc
	decode(t, e.run("--json", "stat", m.Node()).ok(t).stdout, &st)
	if st.Path != m.Node() || st.Kind != "mutex" || st.Part != "participant" || st.Recipe != "/locks/orders" ||
		st.EphemeralOwner != hex(holder.SessionID()) || st.Czxid != m.FencingToken() || st.Ctime.IsZero() {
		t.Fatalf("stat --json of a lock node: %+v", st)
	}
	if out := e.run("stat", "/config/orders").ok(t).stdout; strings.Contains(out, "recipe") {
		t.Fatalf("stat of plain data names a recipe:\n%s", out)
	}

	// A missing node: exit 1, one line; with --json too.
	for _, args := range [][]string{{"ls", "/nope"}, {"ls", "-R", "/nope"}, {"get", "/nope"}, {"stat", "/nope"}, {"--json", "stat", "/nope"}} {
		if r := e.run(args...); r.code != 1 || r.stdout != "" || r.stderr != "gocurator: /nope: no such node\n" {
			t.Fatalf("%v: %+v", args, r)
		}
	}
}

// tree watch --for D ends the watch after D with exit 0 (issue 36: it
// never exited).
func TestTreeWatchFor(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, err := e.client.Create(testkit.Ctx(t), "/cfg", []byte("x")); err != nil {
		t.Fatal(err)
	}
	r := e.run("tree", "watch", "--for", "1s", "/cfg").ok(t)
	if !strings.Contains(r.stdout, "initialized /cfg: 1 nodes") {
		t.Fatalf("tree watch --for:\n%s", r.stdout)
	}
	if r := e.run("tree", "watch", "--for", "-1s", "/cfg"); r.code != exitUsage {
		t.Fatalf("--for -1s: %+v", r)
	}
}
