package console

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/group"
	"github.com/gocurator/curator/recipes/mutex"
)

// namespace makes a fresh namespace for the test and returns n clients of
// it.
func namespace(t *testing.T, n int) []*framework.Client {
	t.Helper()
	ns := testkit.Unique(t)
	if _, err := testkit.Connect(t, addr, "").Create(testkit.Ctx(t), "/"+ns, nil); err != nil {
		t.Fatal(err)
	}
	cs := make([]*framework.Client, n)
	for i := range cs {
		cs[i] = testkit.Connect(t, addr, ns)
	}
	return cs
}

// lockWithWaiter takes the mutex at path through holder and starts a
// waiter through waiter; it returns both handles once the waiter's node
// exists, and the channel of the waiter's acquire.
func lockWithWaiter(t *testing.T, holder, waiter *framework.Client, path string) (*mutex.Mutex, *mutex.Mutex, <-chan error) {
	t.Helper()
	ctx := testkit.Ctx(t)
	h := mutex.New(holder, path)
	if err := h.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	w := mutex.New(waiter, path)
	done := make(chan error, 1)
	wctx, cancel := context.WithCancel(ctx)
	go func() { done <- w.Acquire(wctx) }()
	t.Cleanup(func() {
		cancel()
		if w.IsHeld() {
			_ = w.Release(context.Background())
		}
		if h.IsHeld() {
			_ = h.Release(context.Background())
		}
	})
	testkit.Eventually(t, "the waiter's node exists", func() bool {
		ps, err := h.Participants(ctx)
		return err == nil && len(ps) == 2
	})
	return h, w, done
}

// TestAPIAsTheCLIsJSON reads the JSON API as gocurator's --json is read:
// GET /api/recipes has one object per recipe path, with path and kind;
// a recipe's document lists holders then waiters (inspect.Lock, the
// type of locks ls --json) in the order of the recipe, with their fencing
// tokens; payloads only for token holders.
func TestAPIAsTheCLIsJSON(t *testing.T) {
	t.Parallel()
	cs := namespace(t, 3)
	ctx := testkit.Ctx(t)
	h, _, _ := lockWithWaiter(t, cs[0], cs[1], "/app/locks/a")
	m := group.New(cs[0], "/app/workers", "w1", []byte(`{"password":"hunter2"}`))
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	s := serve(t, cs[2], addr, Options{Root: "/app"})

	var recipes []Recipe
	testkit.Eventually(t, "the API lists the lock with its waiter and the group", func() bool {
		recipes = nil
		s.get(t, "/api/recipes", false, &recipes)
		return len(recipes) == 2 && recipes[0].Waiters == 1
	})
	want := []struct{ path, kind string }{{"/app/locks/a", "mutex"}, {"/app/workers", "group"}}
	for i, w := range want {
		if recipes[i].Path != w.path || recipes[i].Kind != w.kind {
			t.Errorf("recipe %d: %s %s, want %s %s", i, recipes[i].Path, recipes[i].Kind, w.path, w.kind)
		}
	}
	if r := recipes[0]; r.Holders != 1 || r.OldestHolderSince == nil || r.OldestHolderAgeSeconds < 0 || r.Size != 2 {
		t.Errorf("the lock's row: %+v", r)
	}

	var d Detail
	if code := s.get(t, "/api/recipes/app/locks/a", false, &d); code != http.StatusOK {
		t.Fatalf("GET the lock: %d", code)
	}
	ps, err := h.Participants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Locks) != 1 || len(d.Locks[0].Holders) != 1 || len(d.Locks[0].Waiters) != 1 {
		t.Fatalf("the lock's document: %+v", d.Locks)
	}
	if got := []string{d.Locks[0].Holders[0].Node, d.Locks[0].Waiters[0].Node}; got[0] != ps[0] || got[1] != ps[1] {
		t.Errorf("participants %q, the recipe says %q", got, ps)
	}
	if d.Locks[0].Holders[0].Token != h.FencingToken() {
		t.Errorf("holder's token %d, the holder's %d", d.Locks[0].Holders[0].Token, h.FencingToken())
	}
	if d.Locks[0].Holders[0].Connected != "yes" || d.Sessions != "complete" {
		t.Errorf("holder connected %q, sessions %q", d.Locks[0].Holders[0].Connected, d.Sessions)
	}
	if len(d.Terms) != 1 || d.Terms[0].Node != ps[0] || d.Terms[0].End != nil {
		t.Errorf("terms %+v, want one, current, of %s", d.Terms, ps[0])
	}

	// Payloads: hidden without the token, shown with it.
	var g Detail
	s.get(t, "/api/recipes/app/workers", false, &g)
	if !g.PayloadsHidden || len(g.Members) != 1 || g.Members[0].Payload != "" || g.Members[0].ID != "w1" {
		t.Errorf("group without the token: %+v", g)
	}
	g = Detail{}
	s.get(t, "/api/recipes/app/workers", true, &g)
	if g.PayloadsHidden || len(g.Members) != 1 || g.Members[0].Payload != `{"password":"hunter2"}` {
		t.Errorf("group with the token: %+v", g)
	}
}

// TestBadInput: every path the console cannot show is a clear 4xx, as
// JSON on the API and as a page elsewhere.
func TestBadInput(t *testing.T) {
	t.Parallel()
	cs := namespace(t, 2)
	ctx := testkit.Ctx(t)
	lockWithWaiter(t, cs[0], cs[0], "/app/locks/a")
	for _, p := range []string{"/other/x", "/app/plain"} {
		if _, err := cs[0].Create(ctx, p, []byte("data"), framework.CreatingParents()); err != nil {
			t.Fatal(err)
		}
	}
	s := serve(t, cs[1], addr, Options{Root: "/app"})

	for _, tc := range []struct {
		name, path string
		code       int
		msg        string
	}{
		{"outside the root", "/api/recipes/other/x", 404, "outside /app"},
		{"the root's sibling by prefix", "/api/recipes/apple", 404, "outside /app"},
		{"missing", "/api/recipes/app/nothing", 404, "no such node"},
		{"no recipe", "/api/recipes/app/plain", 404, "is no recipe"},
		{"a participant's node", "/api/recipes/app/locks", 404, "is no recipe"},
		{"trailing slash", "/api/recipes/app/locks/a/", 400, "not a valid ZooKeeper path"},
		{"no such API", "/api/nothing", 404, "no API"},
		{"an action by GET", "/api/actions/break", 404, "no API at GET"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e apiErrorDoc
			if code := s.get(t, tc.path, true, &e); code != tc.code {
				t.Errorf("GET %s: %d, want %d", tc.path, code, tc.code)
			}
			if !strings.Contains(e.Error, tc.msg) {
				t.Errorf("GET %s: error %q, want it to say %q", tc.path, e.Error, tc.msg)
			}
		})
	}
	for _, tc := range []struct{ path, msg string }{
		{"/r/other/x", "outside /app"},
		{"/r/app/nothing", "no such node"},
		{"/nowhere", "no page"},
	} {
		resp, err := s.srv.Client().Get(s.srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, resp)
		if resp.StatusCode != 404 || !strings.Contains(body, tc.msg) || !strings.Contains(resp.Header.Get("Content-Type"), "text/html") {
			t.Errorf("GET %s: %d %s, want a 404 page saying %q", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), tc.msg)
		}
	}
	resp, err := s.srv.Client().Get(s.srv.URL + "/events?view=recipe&path=/other")
	if err != nil {
		t.Fatal(err)
	}
	if readAll(t, resp); resp.StatusCode != 404 {
		t.Errorf("events outside the root: %d", resp.StatusCode)
	}

	// A page under another name for loopback (DNS rebinding) is refused.
	req, _ := http.NewRequest(http.MethodGet, s.srv.URL+"/api/recipes", nil)
	req.Host = "attacker.example:80"
	resp, err = s.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if readAll(t, resp); resp.StatusCode != http.StatusForbidden {
		t.Errorf("Host attacker.example: %d, want 403", resp.StatusCode)
	}

	// Actions are off unless allowed.
	var e apiErrorDoc
	if code := s.post(t, "/api/actions/break", url.Values{"node": {"/app/locks/a/x"}, "confirm": {"/app/locks/a/x"}}, true, &e); code != http.StatusForbidden || !strings.Contains(e.Error, "--allow-actions") {
		t.Errorf("break without --allow-actions: %d %q", code, e.Error)
	}
}

// TestTokenAndActions: a console off loopback refuses requests without
// its token; with AllowActions, token holders revoke and break behind a
// confirmation, and each action is logged with the remote address.
func TestTokenAndActions(t *testing.T) {
	t.Parallel()
	cs := namespace(t, 3)
	ctx := testkit.Ctx(t)
	h, w, acquired := lockWithWaiter(t, cs[0], cs[1], "/locks/a")
	s := serve(t, cs[2], addr, Options{RequireToken: true, AllowActions: true})

	var e apiErrorDoc
	if code := s.get(t, "/api/recipes", false, &e); code != http.StatusUnauthorized || !strings.Contains(e.Error, "access token") {
		t.Errorf("no token: %d %q", code, e.Error)
	}
	resp, err := s.srv.Client().Get(s.srv.URL + "/api/recipes?token=wrong")
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(t, resp); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "wrong access token") {
		t.Errorf("wrong token: %d %s", resp.StatusCode, body)
	}
	var recipes []Recipe
	testkit.Eventually(t, "the console lists the lock", func() bool {
		recipes = nil
		return s.get(t, "/api/recipes", true, &recipes) == http.StatusOK && len(recipes) == 1 && recipes[0].Waiters == 1
	})

	node := h.Node()
	form := func(n, confirm string) url.Values { return url.Values{"node": {n}, "confirm": {confirm}} }
	if code := s.post(t, "/api/actions/break", form(node, ""), true, &e); code != http.StatusBadRequest || !strings.Contains(e.Error, "not confirmed") {
		t.Errorf("break unconfirmed: %d %q", code, e.Error)
	}
	if code := s.post(t, "/api/actions/break", form(node, node), false, &e); code != http.StatusUnauthorized {
		t.Errorf("break without the token: %d %q", code, e.Error)
	}
	if code := s.post(t, "/api/actions/break", form("/locks", "/locks"), true, &e); code != http.StatusNotFound || !strings.Contains(e.Error, "not a lock, lease or latch node") {
		t.Errorf("break of the lock's directory: %d %q", code, e.Error)
	}
	if _, _, err := cs[0].Get(ctx, node); err != nil || !h.IsHeld() {
		t.Fatalf("the refused actions touched the holder's node: %v", err)
	}

	var doc actionDoc
	if code := s.post(t, "/api/actions/revoke", form(node, node), true, &doc); code != http.StatusOK || !doc.Done {
		t.Fatalf("revoke: %d %+v", code, doc)
	}
	if data, _, err := cs[0].Get(ctx, node); err != nil || string(data) != "__REVOKE__" {
		t.Errorf("after revoke the node holds %q (%v), want Curator's __REVOKE__", data, err)
	}
	if code := s.post(t, "/api/actions/break", form(node, node), true, &doc); code != http.StatusOK || !doc.Done || doc.Token != h.FencingToken() {
		t.Fatalf("break: %d %+v", code, doc)
	}
	if err := <-acquired; err != nil || !w.IsHeld() {
		t.Fatalf("the waiter after the break: %v", err)
	}
	log := s.log.String()
	for _, want := range []string{"revoke " + node, "break " + node, "asked by 127.0.0.1:", ": done"} {
		if !strings.Contains(log, want) {
			t.Errorf("action log lacks %q:\n%s", want, log)
		}
	}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return b.String()
}

// TestBrowserBreaksAfterConfirmation: with actions allowed, a token
// holder's page has Break on each participant; the browser asks first
// (declined: nothing happens), and once confirmed the node is deleted,
// the waiter takes the lock, and the page shows it.
func TestBrowserBreaksAfterConfirmation(t *testing.T) {
	t.Parallel()
	cs := namespace(t, 3)
	h, w, acquired := lockWithWaiter(t, cs[0], cs[1], "/locks/a")
	s := serve(t, cs[2], addr, Options{AllowActions: true})
	p := s.open(t, browser(t), "/r/locks/a", true)
	_, name := framework.SplitPath(h.Node())
	p.waitFor("Break on the holder's row", `document.querySelector('tr.holder button[data-action="break"]') !== null`)
	click := `document.querySelector('tr.holder button[data-action="break"]').click()`

	p.eval(`(function(){window.confirm=function(m){window.__asked=m;return false};` + click + `;return ""})()`)
	if asked := p.eval(`window.__asked || ""`); !strings.Contains(asked, h.Node()) {
		t.Errorf("the confirmation %q does not name the node", asked)
	}
	p.eval(`(function(){window.confirm=function(m){return true};` + click + `;return ""})()`)
	if err := <-acquired; err != nil || !w.IsHeld() {
		t.Fatalf("the waiter after the break: %v", err)
	}
	_, wname := framework.SplitPath(w.Node())
	p.waitFor("the waiter holding", `document.querySelector("tr.holder td.node").textContent==="`+wname+`"`)
	if log := s.log.String(); strings.Count(log, "console action break") != 1 || !strings.Contains(log, name) {
		t.Errorf("action log: %q, want one break of %s", log, name)
	}
}
