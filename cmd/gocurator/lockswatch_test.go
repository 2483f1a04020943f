package main

import (
	"encoding/json"
	"syscall"
	"testing"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/mutex"
)

// locks watch -r sees a lock that appears levels below PATH, after the
// first view, through its one recursive watch.
func TestLocksWatchRecursiveDeep(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	const root = "/locks/tree"
	top := mutex.New(e.client, root+"/a")
	if err := top.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	p := e.start("--zk", e.zk, "--json", "locks", "watch", "-r", root)
	view := func(what string, n int) []inspect.Lock {
		var got []inspect.Lock
		p.line(t, what, func(s string) bool {
			var doc struct{ Locks []inspect.Lock }
			if err := json.Unmarshal([]byte(s), &doc); err != nil {
				t.Fatalf("bad line %q: %v", s, err)
			}
			got = doc.Locks
			return len(doc.Locks) == n
		})
		return got
	}
	view("the first view", 1)
	deep := mutex.New(e.client, root+"/b/c/d")
	if err := deep.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	locks := view("the deep lock", 2)
	found := false
	for _, l := range locks {
		found = found || l.Path == root+"/b/c/d"
	}
	if !found {
		t.Fatalf("views %+v: no lock at %s/b/c/d", locks, root)
	}
	_ = deep.Release(ctx)
	view("the deep lock released", 1)
	_ = top.Release(ctx)
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	if code := p.wait(t); code != 0 {
		t.Fatalf("watch exit %d on SIGINT (stderr %q)", code, p.stderr.String())
	}
}
