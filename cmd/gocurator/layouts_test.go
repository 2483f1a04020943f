package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
)

// kazooPrefix is a kazoo node's uuid4().hex.
const kazooPrefix = "0123456789abcdef0123456789abcdef"

// locks ls -r finds every layout below a path: go-zookeeper's own lock
// (its real code), kazoo's lock and read/write lock, and a LeaderLatch;
// leader show reads the latch.
func TestLocksLsRecursiveLayouts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	a, b := e.client, e.connect()
	create := func(c *framework.Client, path, data string) string {
		t.Helper()
		node, err := c.Create(ctx, path, []byte(data), framework.WithMode(framework.EphemeralSequential), framework.CreatingParentContainers())
		if err != nil {
			t.Fatal(err)
		}
		return node
	}
	// kazoo: a Lock, and a read/write lock with a reader, a writer and a
	// second reader queued behind the writer.
	kz1 := create(a, "/kazoo/lock/"+kazooPrefix+"__lock__", "worker-1")
	kz2 := create(b, "/kazoo/lock/"+kazooPrefix+"__lock__", "worker-2")
	r1 := create(a, "/kazoo/rw/"+kazooPrefix+"__rlock__", "")
	w := create(b, "/kazoo/rw/"+kazooPrefix+"__lock__", "")
	r2 := create(a, "/kazoo/rw/"+kazooPrefix+"__rlock__", "")
	// A LeaderLatch: protected latch- nodes carrying the participant id.
	l1, err := a.Create(ctx, "/election/latch-", []byte("node-a"), framework.WithMode(framework.EphemeralSequential), framework.Protected(), framework.CreatingParentContainers())
	if err != nil {
		t.Fatal(err)
	}
	l2, err := b.Create(ctx, "/election/latch-", []byte("node-b"), framework.WithMode(framework.EphemeralSequential), framework.Protected())
	if err != nil {
		t.Fatal(err)
	}
	// go-zookeeper's Lock, on raw connections (full server paths).
	gz1 := zk.NewLock(a.Conn(), "/"+e.ns+"/gz", zk.WorldACL(zk.PermAll))
	if err := gz1.Lock(); err != nil {
		t.Fatal(err)
	}
	gz2 := zk.NewLock(b.Conn(), "/"+e.ns+"/gz", zk.WorldACL(zk.PermAll))
	gzDone := make(chan error, 1)
	go func() { gzDone <- gz2.Lock() }()
	e.waitChildren("/gz", 2)

	locks := e.lsJSON("/", "-r")
	type want struct {
		path, kind, client string
		holders, waiters   []string // node names
	}
	name := func(p string) string { _, n := framework.SplitPath(p); return n }
	gzNodes := testkit.Children(t, a, "/gz")
	wants := []want{
		{"/election", inspect.KindLatch, inspect.ClientCurator, []string{name(l1)}, []string{name(l2)}},
		{"/gz", inspect.KindMutex, inspect.ClientGoZookeeper, nil, nil},
		{"/kazoo/lock", inspect.KindMutex, inspect.ClientKazoo, []string{name(kz1)}, []string{name(kz2)}},
		{"/kazoo/rw", inspect.KindReadWrite, inspect.ClientKazoo, []string{name(r1)}, []string{name(w), name(r2)}},
	}
	if len(locks) != len(wants) {
		t.Fatalf("got %d locks, want %d: %+v", len(locks), len(wants), locks)
	}
	names := func(ps []inspect.Participant) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Name())
		}
		return out
	}
	for i, w := range wants {
		l := locks[i]
		if l.Path != w.path || l.Kind != w.kind {
			t.Fatalf("lock %d: %s %s, want %s %s", i, l.Path, l.Kind, w.path, w.kind)
		}
		for _, p := range append(append([]inspect.Participant{}, l.Holders...), l.Waiters...) {
			if p.Client != w.client {
				t.Fatalf("%s: client %q, want %q", p.Node, p.Client, w.client)
			}
		}
		if w.holders == nil { // go-zookeeper: the lower sequence holds
			if len(l.Holders) != 1 || len(l.Waiters) != 1 || len(gzNodes) != 2 {
				t.Fatalf("go-zookeeper lock: %+v", l)
			}
			continue
		}
		if strings.Join(names(l.Holders), ",") != strings.Join(w.holders, ",") || strings.Join(names(l.Waiters), ",") != strings.Join(w.waiters, ",") {
			t.Fatalf("%s: holders %v waiters %v, want %v %v", l.Path, names(l.Holders), names(l.Waiters), w.holders, w.waiters)
		}
	}
	if h := locks[2].Holders[0]; h.Host != "worker-1" || h.Session != hex(a.SessionID()) {
		t.Fatalf("kazoo holder %+v", h)
	}

	// leader show: the first latch node leads.
	out := e.run("--json", "leader", "show", "/election").ok(t).stdout
	var doc struct {
		Layout string `json:"layout"`
		Leader *struct {
			ID      string `json:"id"`
			Session string `json:"session"`
			Node    string `json:"node"`
		} `json:"leader"`
		Participants []struct {
			ID string `json:"id"`
		} `json:"participants"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if doc.Layout != "latch" || doc.Leader == nil || doc.Leader.ID != "node-a" || doc.Leader.Node != l1 ||
		doc.Leader.Session != hex(a.SessionID()) || len(doc.Participants) != 2 || doc.Participants[1].ID != "node-b" {
		t.Fatalf("leader show: %s", out)
	}
	table := e.run("leader", "show", "/election").ok(t).stdout
	if !strings.HasPrefix(table, `/election  latch election  leader "node-a"`) {
		t.Fatalf("table:\n%s", table)
	}

	if err := gz1.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := <-gzDone; err != nil {
		t.Fatal(err)
	}
	_ = gz2.Unlock()
}
