package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/gocurator/curator/cmd/internal/console"
	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/atomic"
	"github.com/gocurator/curator/recipes/group"
	"github.com/gocurator/curator/recipes/leader"
	"github.com/gocurator/curator/recipes/mutex"
)

// uiGet fetches base+path and decodes its JSON into v; it returns the
// status.
func uiGet(t *testing.T, base, path string, v any) int {
	t.Helper()
	resp, err := http.Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("GET %s: %d, not JSON: %v\n%s", path, resp.StatusCode, err, body)
		}
	}
	return resp.StatusCode
}

// startUI runs gocurator ui with args and returns the URL it prints, split
// into the base and the token.
func (e *env) startUI(args ...string) (*started, string, string) {
	e.t.Helper()
	s := e.start(append([]string{"--zk", e.zk, "ui"}, args...)...)
	line := s.line(e.t, "the console's URL", func(l string) bool { return strings.HasPrefix(l, "http://") })
	u, err := url.Parse(line)
	if err != nil {
		e.t.Fatalf("gocurator ui printed %q: %v", line, err)
	}
	tok := u.Query().Get("token")
	if tok == "" || u.Path != "/" {
		e.t.Fatalf("gocurator ui printed %q: want http://HOST:PORT/?token=...", line)
	}
	return s, "http://" + u.Host, tok
}

// participantKey is what locks ls --json and the console both say of a
// participant (ages and connection details aside, which move).
type participantKey struct {
	Node, Role, Client, Session, Host string
	Seq                               int32
	Token                             int64
}

func keys(ps []inspect.Participant) []participantKey {
	out := make([]participantKey, len(ps))
	for i, p := range ps {
		out[i] = participantKey{p.Node, p.Role, p.Client, p.Session, p.Host, p.Seq, p.Token}
	}
	return out
}

// TestUIServesWhatTheCLIPrints starts gocurator ui on a tree with a lock
// (holder and waiter), an election, a group and a counter: it prints its
// URL with a token; GET /api/recipes has one object per recipe path with
// path and kind; each recipe's document says what locks ls, leader show,
// group ls and atomic get say with --json; SIGINT ends it with status 0.
func TestUIServesWhatTheCLIPrints(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	holder := mutex.New(e.client, "/locks/orders")
	if err := holder.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = mutex.New(e.connect(), "/locks/orders").Acquire(wctx) }()
	e.waitChildren("/locks/orders", 2)
	if _, err := leader.New(e.client, "/election", leader.WithID("node-a")).Campaign(ctx); err != nil {
		t.Fatal(err)
	}
	m := group.New(e.connect(), "/workers", "w1", []byte(`{"zone":"eu-1"}`))
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	if _, err := atomic.NewLong(e.client, "/counters/orders").Add(ctx, 7); err != nil {
		t.Fatal(err)
	}

	s, base, tok := e.startUI("--listen", "127.0.0.1:0")
	var recipes []map[string]any
	testkit.Eventually(t, "the console lists four recipes", func() bool {
		recipes = nil
		return uiGet(t, base, "/api/recipes", &recipes) == http.StatusOK && len(recipes) == 4
	})
	kinds := map[string]string{}
	for _, r := range recipes {
		p, _ := r["path"].(string)
		k, _ := r["kind"].(string)
		kinds[p] = k
	}
	want := map[string]string{"/locks/orders": "mutex", "/election": "latch", "/workers": "group", "/counters/orders": "counter"}
	for p, k := range want {
		if kinds[p] != k {
			t.Errorf("/api/recipes: %s is %q, want %q (all: %v)", p, kinds[p], k, kinds)
		}
	}

	// The lock and the election, as locks ls -r --json has them.
	cli := map[string]inspect.Lock{}
	for _, l := range e.lsJSON("-r", "/") {
		cli[l.Path] = l
	}
	for _, p := range []string{"/locks/orders", "/election"} {
		var d console.Detail
		if code := uiGet(t, base, "/api/recipes"+p, &d); code != http.StatusOK || len(d.Locks) != 1 {
			t.Fatalf("GET /api/recipes%s: %d, %d locks", p, code, len(d.Locks))
		}
		got, exp := d.Locks[0], cli[p]
		if got.Kind != exp.Kind || !equal(keys(got.Holders), keys(exp.Holders)) || !equal(keys(got.Waiters), keys(exp.Waiters)) {
			t.Errorf("%s: the console says\n%+v\nlocks ls --json says\n%+v", p, got, exp)
		}
	}
	var ld struct {
		Leader struct {
			ID string `json:"id"`
		} `json:"leader"`
	}
	decode(t, e.run("--json", "leader", "show", "/election").ok(t).stdout, &ld)
	var el console.Detail
	uiGet(t, base, "/api/recipes/election", &el)
	if ld.Leader.ID != "node-a" || el.Recipe.Leader != ld.Leader.ID {
		t.Errorf("leader: console %q, leader show %q", el.Recipe.Leader, ld.Leader.ID)
	}

	// The group: payloads only with the token the URL carries.
	var gd groupDoc
	decode(t, e.run("--json", "group", "ls", "/workers").ok(t).stdout, &gd)
	var g console.Detail
	uiGet(t, base, "/api/recipes/workers", &g)
	if len(g.Members) != 1 || g.Members[0].ID != gd.Members[0].ID || g.Members[0].Session != gd.Members[0].Session || g.Members[0].Payload != "" || !g.PayloadsHidden {
		t.Errorf("group without the token: %+v (group ls: %+v)", g.Members, gd.Members)
	}
	g = console.Detail{}
	uiGet(t, base, "/api/recipes/workers?token="+tok, &g)
	if len(g.Members) != 1 || g.Members[0].Payload != gd.Members[0].Payload || g.PayloadsHidden {
		t.Errorf("group with the token: %+v (group ls: %+v)", g.Members, gd.Members)
	}

	// The counter.
	var ad atomicDoc
	decode(t, e.run("--json", "atomic", "get", "/counters/orders").ok(t).stdout, &ad)
	var c console.Detail
	uiGet(t, base, "/api/recipes/counters/orders", &c)
	if c.Counter == nil || c.Counter.Value != ad.Value || ad.Value != 7 {
		t.Errorf("counter: console %+v, atomic get %+v", c.Counter, ad)
	}

	if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := s.wait(t); code != 0 {
		t.Errorf("gocurator ui after SIGINT: exit %d, stderr %q", code, s.stderr.String())
	}
}

// TestUIOffLoopbackNeedsTheToken: listening on every interface, the
// console refuses a request without the token it printed.
func TestUIOffLoopbackNeedsTheToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, base, tok := e.startUI("--listen", "0.0.0.0:0", "--token", "s3cret-token")
	if tok != "s3cret-token" {
		t.Errorf("printed token %q, want the one given", tok)
	}
	_, port, err := net.SplitHostPort(strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	local := "http://127.0.0.1:" + port
	var e401 struct {
		Error string `json:"error"`
	}
	if code := uiGet(t, local, "/api/recipes", &e401); code != http.StatusUnauthorized || !strings.Contains(e401.Error, "access token") {
		t.Errorf("without the token: %d %q", code, e401.Error)
	}
	var recipes []any
	if code := uiGet(t, local, "/api/recipes?token="+tok, &recipes); code != http.StatusOK {
		t.Errorf("with the token: %d", code)
	}
}

// TestUIBadCommandLines: a bad PATH or listen address exits 2, a missing
// PATH 1, each with one line on stderr; nothing is served.
func TestUIBadCommandLines(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"ui", "/locks/"}, exitUsage, "not a valid ZooKeeper path"},
		{[]string{"ui", "--listen", "8080"}, exitUsage, "--listen"},
		{[]string{"ui", "--rows", "0"}, exitUsage, "--rows"},
		{[]string{"ui", "/a", "/b"}, exitUsage, "accepts at most 1 arg"},
		{[]string{"ui", "/missing", "--listen", "127.0.0.1:0"}, exitFailure, "no such node"},
	} {
		r := e.run(tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) || strings.Count(r.stderr, "\n") != 1 || r.stdout != "" {
			t.Errorf("gocurator %v: exit %d, stderr %q, stdout %q; want exit %d saying %q", tc.args, r.code, r.stderr, r.stdout, tc.code, tc.msg)
		}
	}
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
