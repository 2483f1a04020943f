package console

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/atomic"
	"github.com/gocurator/curator/recipes/discovery"
	"github.com/gocurator/curator/recipes/group"
	"github.com/gocurator/curator/recipes/leader"
	"github.com/gocurator/curator/recipes/mutex"
)

// fleet is a mixed fleet's recipes in one test's namespace: a lock held
// by Curator (Java) with a Go waiter, an election of two Go clients, a
// group, a discovery registration and a counter.
type fleet struct {
	java      *curatorjava.Driver
	javaNode  string // the Java holder's lock node
	goWaiter  *mutex.Mutex
	acquired  chan error
	leaderA   *framework.Client
	electionB chan error
	counter   *atomic.Long
	console   *framework.Client
	nodeOf    func(path string) (token int64, session string)
}

func newFleet(t *testing.T) *fleet {
	t.Helper()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	root := testkit.Connect(t, addr, "")
	if _, err := root.Create(ctx, "/"+ns, nil); err != nil {
		t.Fatal(err)
	}
	goc := testkit.Connect(t, addr, ns)
	f := &fleet{acquired: make(chan error, 1), electionB: make(chan error, 1), console: testkit.Connect(t, addr, ns)}
	f.nodeOf = func(p string) (int64, string) {
		_, st, err := goc.Get(ctx, p)
		if err != nil {
			t.Fatalf("get %s: %v", p, err)
		}
		return st.Czxid, fmt.Sprintf("0x%x", uint64(st.EphemeralOwner))
	}

	// The lock: Curator holds, a Go handle waits.
	f.java = curatorjava.StartDriver(t, addr+"/"+ns)
	f.java.MustDo("mutex j /locks/orders")
	if got := f.java.MustDo("acquire j -1"); got != "true" {
		t.Fatalf("Curator's acquire: %q", got)
	}
	f.goWaiter = mutex.New(goc, "/locks/orders")
	go func() { f.acquired <- f.goWaiter.Acquire(ctx) }()
	var nodes []string
	testkit.Eventually(t, "the Go waiter's node exists", func() bool {
		var err error
		nodes, err = f.goWaiter.Participants(ctx)
		return err == nil && len(nodes) == 2
	})
	f.javaNode = nodes[0]
	t.Cleanup(func() {
		if f.goWaiter.IsHeld() {
			_ = f.goWaiter.Release(context.Background())
		}
	})

	// The election: a leads, b waits.
	f.leaderA = testkit.Connect(t, addr, ns)
	if _, err := leader.New(f.leaderA, "/election/app", leader.WithID("node-a")).Campaign(ctx); err != nil {
		t.Fatal(err)
	}
	bctx, cancelB := context.WithCancel(ctx)
	t.Cleanup(cancelB)
	go func() {
		_, err := leader.New(goc, "/election/app", leader.WithID("node-b")).Campaign(bctx)
		f.electionB <- err
	}()
	testkit.Eventually(t, "both candidates' nodes exist", func() bool {
		return len(testkit.Children(t, goc, "/election/app")) == 2
	})

	// A group member, a registered service, a counter.
	m := group.New(goc, "/groups/workers", "worker-1", []byte(`{"zone":"eu-1","slots":4}`))
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	d := discovery.New(goc, "/services")
	port := 8080
	if err := d.Register(ctx, discovery.Instance{Name: "api", ID: "api-1", Address: "10.0.0.7", Port: &port}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	f.counter = atomic.NewLong(goc, "/counters/orders")
	if _, err := f.counter.Add(ctx, 42); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestBrowserFollowsRecipesLive opens the console in Chromium on a mixed
// fleet and changes the fleet under it: the page shows Curator's holder
// and the Go waiter, the waiter moves up when Curator releases, the leader
// changes when its client dies, the counter changes; all without a
// reload (a marker set at load survives every check).
func TestBrowserFollowsRecipesLive(t *testing.T) {
	t.Parallel()
	f := newFleet(t)
	s := serve(t, f.console, addr, Options{})
	ctx := browser(t)

	// The overview: every recipe, with what it is and what it holds.
	p := s.open(t, ctx, "/", true)
	if search := p.eval(`location.search`); search != "" {
		t.Errorf("the token stayed in the address bar: %q", search)
	}
	p.waitFor("the lock with Curator's holder and the Go waiter",
		`(function(){var r=document.querySelector('tr[data-path="/locks/orders"]');return r&&r.dataset.kind==="mutex"&&r.querySelector(".now").textContent.indexOf("1 holding, 1 waiting")>=0})()`)
	for path, kind := range map[string]string{
		"/election/app": "latch", "/groups/workers": "group", "/services": "service-discovery",
		"/services/api": "service", "/counters/orders": "counter",
	} {
		p.waitFor(path+" as a "+kind, `(function(){var r=document.querySelector('tr[data-path="`+path+`"]');return r&&r.dataset.kind==="`+kind+`"})()`)
	}
	if got := p.text(`tr[data-path="/counters/orders"] .value`); got != "42" {
		t.Errorf("overview's counter: %q, want 42", got)
	}
	if got := p.text(`tr[data-path="/election/app"] .leader`); got != "node-a" {
		t.Errorf("overview's leader: %q, want node-a", got)
	}
	p.screenshot("overview")

	// The lock's page: Curator's node holds, with its token and session.
	lock := s.open(t, ctx, "/r/locks/orders", false) // the cookie carries the token
	token, session := f.nodeOf(f.javaNode)
	_, javaName := framework.SplitPath(f.javaNode)
	lock.waitFor("Curator's node holding", `document.querySelector("tr.holder td.node") && document.querySelector("tr.holder td.node").textContent==="`+javaName+`"`)
	if got := lock.text("tr.holder td.token"); got != strconv.FormatInt(token, 10) {
		t.Errorf("holder's fencing token %q, want %d", got, token)
	}
	if got := lock.text("tr.holder td.session"); got != session {
		t.Errorf("holder's session %q, want %s", got, session)
	}
	if got := lock.text("tr.holder td.client"); got != "Curator/Go" {
		t.Errorf("holder's client %q", got)
	}
	if got := lock.text("tr.holder td.conn"); got != "yes" && !startsWith(got, "yes") {
		t.Errorf("holder's session connected: %q, want yes", got)
	}
	if n := lock.eval(`String(document.querySelectorAll("tr.waiter").length)`); n != "1" {
		t.Errorf("%s waiters shown, want 1", n)
	}
	lock.screenshot("lock-held-by-curator")

	// Curator releases: the Go waiter holds, on the same page.
	f.java.MustDo("release j")
	if err := <-f.acquired; err != nil {
		t.Fatalf("the Go waiter's acquire: %v", err)
	}
	_, goName := framework.SplitPath(f.goWaiter.Node())
	lock.waitFor("the Go waiter moved up to holder",
		`document.querySelector("tr.holder td.node") && document.querySelector("tr.holder td.node").textContent==="`+goName+`" && document.querySelectorAll("tr.waiter").length===0`)
	lock.waitFor("Curator's term ended in the history", `document.querySelectorAll("#terms tbody tr").length===2`)
	lock.screenshot("lock-after-release")

	// The election: a leads; its client dies; b leads.
	el := s.open(t, ctx, "/r/election/app", false)
	el.waitFor("node-a leading", `document.querySelector("tr.holder td.id") && document.querySelector("tr.holder td.id").textContent==="node-a"`)
	if err := f.leaderA.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-f.electionB; err != nil {
		t.Fatalf("b's campaign: %v", err)
	}
	el.waitFor("node-b leading after a's client died",
		`document.querySelector("tr.holder td.id") && document.querySelector("tr.holder td.id").textContent==="node-b" && document.querySelectorAll("tr.waiter").length===0`)
	el.waitFor("two terms in the history", `document.querySelectorAll("#terms tbody tr").length===2`)
	if got := el.text("#terms tbody tr:first-child td.id"); got != "node-a" {
		t.Errorf("first term's id %q, want node-a", got)
	}
	el.screenshot("election-after-leader-died")

	// The group's member, with its payload pretty-printed.
	g := s.open(t, ctx, "/r/groups/workers", false)
	g.waitFor("worker-1 with its payload", `document.querySelector('tr[data-id="worker-1"] pre.payload') && document.querySelector('tr[data-id="worker-1"] pre.payload').textContent.indexOf('"zone": "eu-1"')>=0`)

	// The service's instance.
	sv := s.open(t, ctx, "/r/services/api", false)
	sv.waitFor("api-1 at 10.0.0.7:8080", `document.querySelector('tr[data-id="api-1"] td.addr') && document.querySelector('tr[data-id="api-1"] td.addr').textContent==="10.0.0.7:8080"`)
	sv.screenshot("service")

	// The counter, live.
	c := s.open(t, ctx, "/r/counters/orders", false)
	c.waitFor("the counter at 42", `document.getElementById("counter-value") && document.getElementById("counter-value").textContent==="42"`)
	if _, err := f.counter.Add(testkit.Ctx(t), 1); err != nil {
		t.Fatal(err)
	}
	c.waitFor("the counter at 43", `document.getElementById("counter-value").textContent==="43"`)

	// On a phone's screen the page fits its width: wide tables scroll in
	// their own box.
	phone := s.open(t, ctx, "/r/locks/orders", false)
	phone.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile))
	phone.waitFor("the lock's page within a phone's width",
		`document.querySelector("tr.holder") !== null && document.documentElement.scrollWidth <= window.innerWidth`)
	phone.screenshot("phone")
}

func startsWith(s, prefix string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix }
