package main

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
)

// treeLine is a --json line of tree watch.
type treeLine struct {
	Event      string `json:"event"`
	Path       string `json:"path"`
	Version    *int32 `json:"version"`
	DataLength *int   `json:"data_length"`
	Data       *string
	DataBase64 []byte `json:"data_base64"`
	Nodes      *int   `json:"nodes"`
	Ephemeral  string `json:"ephemeral_owner"`
}

// tree watch --json prints each node of the subtree, initialized, then
// each change, and stops after --updates changes.
func TestTreeWatchJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	for p, data := range map[string]string{"/cfg/a": "one", "/cfg/b/c": "two"} {
		if _, err := e.client.Create(ctx, p, []byte(data), framework.CreatingParents()); err != nil {
			t.Fatal(err)
		}
	}
	p := e.start("--zk", e.zk, "--json", "tree", "watch", "--updates", "3", "/cfg")
	next := func(what string) treeLine {
		var l treeLine
		p.line(t, what, func(s string) bool {
			l = treeLine{}
			if err := json.Unmarshal([]byte(s), &l); err != nil {
				t.Fatalf("bad line %q: %v", s, err)
			}
			return true
		})
		return l
	}
	seen := map[string]treeLine{}
	for {
		l := next("the initial load")
		if l.Event == "initialized" {
			if l.Nodes == nil || *l.Nodes != 4 {
				t.Fatalf("initialized %+v, want 4 nodes", l)
			}
			break
		}
		if l.Event != "created" {
			t.Fatalf("load line %+v, want created", l)
		}
		seen[l.Path] = l
	}
	if len(seen) != 4 || seen["/cfg/a"].Data == nil || *seen["/cfg/a"].Data != "one" || *seen["/cfg/b/c"].DataLength != 3 {
		t.Fatalf("loaded %+v", seen)
	}
	if _, err := e.client.Set(ctx, "/cfg/a", []byte{0xff, 0}, -1); err != nil {
		t.Fatal(err)
	}
	if l := next("the change"); l.Event != "changed" || l.Path != "/cfg/a" || *l.Version != 1 || string(l.DataBase64) != "\xff\x00" {
		t.Fatalf("change %+v", l)
	}
	if _, err := e.client.Create(ctx, "/cfg/b/e", nil, framework.WithMode(framework.Ephemeral)); err != nil {
		t.Fatal(err)
	}
	if l := next("the creation"); l.Event != "created" || l.Path != "/cfg/b/e" || l.Ephemeral != hex(e.client.SessionID()) {
		t.Fatalf("creation %+v", l)
	}
	if err := e.client.Delete(ctx, "/cfg/b/c"); err != nil {
		t.Fatal(err)
	}
	if l := next("the deletion"); l.Event != "deleted" || l.Path != "/cfg/b/c" {
		t.Fatalf("deletion %+v", l)
	}
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d after --updates 3 (stderr %q)", code, p.stderr.String())
	}
}

// tree watch prints a line per node and per change, and exits 0 on SIGINT.
func TestTreeWatchText(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	if _, err := e.client.Create(ctx, "/svc/x", []byte("hello"), framework.CreatingParents()); err != nil {
		t.Fatal(err)
	}
	p := e.start("--zk", e.zk, "tree", "watch", "--depth", "1", "/svc")
	p.line(t, "the node", func(s string) bool {
		return strings.Contains(s, "created") && strings.Contains(s, "/svc/x") && strings.Contains(s, `"hello"`)
	})
	p.line(t, "initialized", func(s string) bool { return strings.Contains(s, "initialized /svc: 2 nodes") })
	// Below --depth 1: not shown; the next line is the change after it.
	if _, err := e.client.Create(ctx, "/svc/x/deep", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.Set(ctx, "/svc/x", []byte("bye"), -1); err != nil {
		t.Fatal(err)
	}
	if l := p.line(t, "the change", func(string) bool { return true }); !strings.Contains(l, "changed") || !strings.Contains(l, "/svc/x  v1 3 B") {
		t.Fatalf("line %q, want the change of /svc/x (nothing of /svc/x/deep)", l)
	}
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d on SIGINT (stderr %q)", code, p.stderr.String())
	}
}

func TestTreeWatchBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, args := range [][]string{{"tree", "watch", "rel"}, {"tree", "watch", "--depth", "-1", "/a"}, {"tree", "watch"}} {
		r := e.run(args...)
		if r.code != exitUsage {
			t.Errorf("%v: exit %d, want %d (stderr %q)", args, r.code, exitUsage, r.stderr)
		}
	}
}
