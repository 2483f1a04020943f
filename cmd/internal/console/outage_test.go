package console

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/zktest"
)

// TestBrowserSaysWhenServersGoAway: with the page open, ZooKeeper stops
// (the page says it is unreachable, and keeps the last state), comes back
// (the warning goes, and a change made then shows); then the console's
// own server goes away (the page says so) and comes back on its address
// (the page follows again), all without a reload.
func TestBrowserSaysWhenServersGoAway(t *testing.T) {
	t.Parallel()
	zks := zktest.StartServer(t)
	ctx := testkit.Ctx(t)
	h := mutex.New(testkit.Connect(t, zks.Addr(), ""), "/locks/x")
	if err := h.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	c := testkit.Connect(t, zks.Addr(), "")
	tok, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	con, err := New(c, Options{Token: tok, Servers: inspect.Servers(zks.Addr())})
	if err != nil {
		t.Fatal(err)
	}
	if err := con.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = con.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := serveOn(t, ln, con)
	s := &served{con: con, srv: nil, token: tok}
	base := "http://" + ln.Addr().String()

	b := browser(t)
	p := &page{t: t, ctx: b, s: s}
	p.navigate(base + "/r/locks/x?token=" + tok)
	_, name := framework.SplitPath(h.Node())
	p.waitFor("the holder", `document.querySelector("tr.holder td.node") && document.querySelector("tr.holder td.node").textContent==="`+name+`"`)

	// ZooKeeper goes away, and comes back. The test server's sessions
	// last at most 4 s, less than a restart: every session expires, the
	// holder's too, and the console's client makes a new one.
	if err := zks.Stop(); err != nil {
		t.Fatal(err)
	}
	p.waitFor("that ZooKeeper is unreachable", `document.getElementById("zk-down") !== null && document.querySelector("tr.holder td.node").textContent==="`+name+`"`)
	p.screenshot("zookeeper-down")
	if err := zks.Restart(); err != nil {
		t.Fatal(err)
	}
	p.waitFor("the connection back", `document.getElementById("zk-down") === null`)
	// A change made after the outage shows: a new holder, then a waiter.
	h2 := mutex.New(testkit.Connect(t, zks.Addr(), ""), "/locks/x")
	if err := h2.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	_, name2 := framework.SplitPath(h2.Node())
	p.waitFor("the holder that came after the outage", `document.querySelector("tr.holder td.node") && document.querySelector("tr.holder td.node").textContent==="`+name2+`"`)
	w := mutex.New(testkit.Connect(t, zks.Addr(), ""), "/locks/x")
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	acquired := make(chan error, 1)
	go func() { acquired <- w.Acquire(wctx) }()
	p.waitFor("its waiter", `document.querySelectorAll("tr.waiter").length===1`)

	// The console's server goes away, and comes back on its address.
	addr := ln.Addr().String()
	if err := hs.Close(); err != nil {
		t.Fatal(err)
	}
	p.waitFor("that the console is unreachable", `!document.getElementById("offline").hidden`)
	p.screenshot("console-down")
	if err := h2.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-acquired; err != nil {
		t.Fatal(err)
	}
	ln2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listening again on %s: %v", addr, err)
	}
	serveOn(t, ln2, con)
	_, wname := framework.SplitPath(w.Node())
	p.waitFor("the console back, with the waiter holding",
		`document.getElementById("offline").hidden && document.querySelector("tr.holder td.node") && document.querySelector("tr.holder td.node").textContent==="`+wname+`"`)
	if err := w.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// serveOn serves con on ln until the test ends (or Close).
func serveOn(t *testing.T, ln net.Listener, con *Console) *http.Server {
	hs := &http.Server{Handler: con.Handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	t.Cleanup(func() {
		_ = hs.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("console server: %v", err)
		}
	})
	return hs
}
