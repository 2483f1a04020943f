package main

import (
	"encoding/json"
	"syscall"
	"testing"
	"time"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/mutex"
)

// A holder's AGE counts its wait; locks watch, which saw the grant, gives
// the hold's own age: held_since is when the next holder was seen holding,
// after the release, not when its node was made.
func TestLocksWatchHoldAge(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	const path = "/locks/aged"
	m1 := mutex.New(e.client, path)
	if err := m1.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	m2 := mutex.New(e.connect(), path)
	got := make(chan error, 1)
	go func() { got <- m2.Acquire(ctx) }()
	e.waitChildren(path, 2)

	p := e.start("--zk", e.zk, "--json", "locks", "watch", path)
	view := func(what string, waiters int) inspect.Lock {
		var l inspect.Lock
		p.line(t, what, func(s string) bool {
			var doc struct{ Locks []inspect.Lock }
			if err := json.Unmarshal([]byte(s), &doc); err != nil {
				t.Fatalf("bad line %q: %v", s, err)
			}
			if len(doc.Locks) == 1 && len(doc.Locks[0].Waiters) == waiters {
				l = doc.Locks[0]
				return true
			}
			return false
		})
		return l
	}
	// Holding when watch started: the grant was not seen.
	if h := view("the first view", 1).Holders[0]; h.HeldSince != nil {
		t.Fatalf("first holder has held_since %v: its grant was never seen", h.HeldSince)
	}
	released := time.Now()
	if err := m1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	h := view("the hand-over", 0).Holders[0]
	if h.Node != m2.Node() || h.HeldSince == nil || h.HeldSince.Before(released.Add(-time.Second)) ||
		!h.HeldSince.After(h.Created) {
		t.Fatalf("new holder %+v: want held_since after the release at %v and after its node's creation", h, released)
	}
	_ = m2.Release(ctx)
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	if code := p.wait(t); code != 0 {
		t.Fatalf("watch exit %d on SIGINT (stderr %q)", code, p.stderr.String())
	}
}
