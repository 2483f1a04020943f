package framework

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// A watch abandoned by its caller (a timed-out acquire leaves the watch on
// its predecessor) must cost no goroutine of its own until it fires: with a
// namespace or a chroot, whose prefix the client strips from event paths,
// each used to hold one. The watches still deliver exactly one event each,
// with the prefix stripped, and EventNotWatching when the client closes.
func TestAbandonedWatchesCostNoGoroutine(t *testing.T) {
	tests := []struct {
		name    string
		connect func(t *testing.T) *Client
	}{
		{"namespace", func(t *testing.T) *Client { return connectNS(t, newNamespace(t)) }},
		{"chroot", func(t *testing.T) *Client {
			return connect(t, server(t).ConnectString()+"/"+newNamespace(t))
		}},
		{"chroot and namespace", func(t *testing.T) *Client {
			return connect(t, server(t).ConnectString()+"/"+newNamespace(t), WithNamespace("ns/inner"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.connect(t)
			ctx := testCtx(t)
			if _, err := c.Create(ctx, "/w/kid", nil, CreatingParents()); err != nil {
				t.Fatal(err)
			}
			type watch struct {
				kind, path string
				ch         <-chan zk.Event
			}
			var round int
			watchAll := func(n int) []watch {
				var ws []watch
				for range n {
					round++
					_, _, g, err := c.GetW(ctx, "/w")
					if err != nil {
						t.Fatal(err)
					}
					_, e, err := c.ExistsW(ctx, "/w")
					if err != nil {
						t.Fatal(err)
					}
					_, _, ch, err := c.ChildrenW(ctx, "/w")
					if err != nil {
						t.Fatal(err)
					}
					missing := fmt.Sprintf("/missing-%d", round)
					_, m, err := c.ExistsW(ctx, missing)
					if err != nil {
						t.Fatal(err)
					}
					ws = append(ws, watch{"data", "/w", g}, watch{"exists", "/w", e},
						watch{"children", "/w", ch}, watch{"missing", missing, m})
				}
				return ws
			}
			// The first watches start whatever the client needs for all.
			ws := watchAll(1)
			before := runtime.NumGoroutine()
			ws = append(ws, watchAll(250)...)
			// (Polled: a call's own short-lived goroutines may still be
			// on their way out.)
			eventually(t, 5*time.Second, "as many goroutines after 1000 more watches", func() (bool, error) {
				after := runtime.NumGoroutine()
				return after <= before+5, fmt.Errorf("%d more goroutines", after-before)
			})

			// Watches still fire, each exactly once, with paths stripped.
			if _, err := c.Set(ctx, "/w", []byte("changed"), -1); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Create(ctx, "/w/kid2", nil); err != nil {
				t.Fatal(err)
			}
			want := map[string]zk.EventType{
				"data":     zk.EventNodeDataChanged,
				"exists":   zk.EventNodeDataChanged,
				"children": zk.EventNodeChildrenChanged,
			}
			for _, w := range ws {
				if w.kind == "missing" {
					select {
					case ev := <-w.ch:
						t.Fatalf("watch on %s, a node nobody made, fired: %+v", w.path, ev)
					default:
					}
					continue
				}
				ev := waitEvent(t, w.ch, testTimeout, w.kind+" watch")
				if ev.Type != want[w.kind] || ev.Path != w.path {
					t.Fatalf("%s watch: event %+v, want %v on %s", w.kind, ev, want[w.kind], w.path)
				}
				if ev, ok := <-w.ch; ok {
					t.Fatalf("%s watch: a second event %+v", w.kind, ev)
				}
			}

			// The abandoned ones end with the client: one EventNotWatching
			// each, then their channels close.
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			for _, w := range ws {
				if w.kind != "missing" {
					continue
				}
				ev := waitEvent(t, w.ch, testTimeout, "watch at Close")
				if ev.Type != zk.EventNotWatching || ev.Path != w.path {
					t.Fatalf("watch on %s at Close: event %+v, want EventNotWatching on %s", w.path, ev, w.path)
				}
				if ev, ok := <-w.ch; ok {
					t.Fatalf("watch on %s: a second event %+v", w.path, ev)
				}
			}
			// A watch handed over as Close runs ends the same way.
			in := make(chan zk.Event, 1)
			late := c.watch(in, "/late")
			if ev := waitEvent(t, late, testTimeout, "watch after Close"); ev.Type != zk.EventNotWatching || ev.Path != "/late" {
				t.Fatalf("watch after Close: event %+v, want EventNotWatching on /late", ev)
			}
			if _, ok := <-late; ok {
				t.Fatal("watch after Close: a second event")
			}
		})
	}
}

// Watches firing while the client closes, more than one pump waits on:
// every watch channel still gets exactly one event (its change, or
// EventNotWatching) and is closed; none is lost, none is doubled.
func TestWatchesEndExactlyOnceAtClose(t *testing.T) {
	ns := newNamespace(t)
	c := connectNS(t, ns)
	other := connectNS(t, ns)
	ctx := testCtx(t)
	const n = watchPumpCap + watchPumpCap/2
	const batch = 100
	for i := 0; i < n; i += batch {
		var ops []Op
		for j := i; j < i+batch && j < n; j++ {
			ops = append(ops, CreateOp(fmt.Sprintf("/n%d", j), nil, Persistent))
		}
		if _, err := c.Multi(ctx, ops...); err != nil {
			t.Fatal(err)
		}
	}
	chans := make([]<-chan zk.Event, n)
	for i := range chans {
		_, _, ch, err := c.GetW(ctx, fmt.Sprintf("/n%d", i))
		if err != nil {
			t.Fatal(err)
		}
		chans[i] = ch
	}
	c.mu.Lock()
	pumps := len(c.watches.pumps)
	c.mu.Unlock()
	if pumps != 2 {
		t.Fatalf("%d watches on %d pumps, want 2", n, pumps)
	}
	// Another client deletes the nodes while this one closes.
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- func() error {
			for i := 0; i < n; i += batch {
				if i == 5*batch {
					close(started)
				}
				var ops []Op
				for j := i; j < i+batch && j < n; j++ {
					ops = append(ops, DeleteOp(fmt.Sprintf("/n%d", j), -1))
				}
				if _, err := other.Multi(ctx, ops...); err != nil {
					return err
				}
			}
			return nil
		}()
	}()
	waitClosed(t, started, testTimeout, "deletes under way")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := waitEvent(t, done, testTimeout, "deletes"); err != nil {
		t.Fatal(err)
	}
	var fired, ended int
	for i, ch := range chans {
		ev := waitEvent(t, ch, testTimeout, "watch event")
		switch {
		case ev.Type == zk.EventNodeDeleted && ev.Path == fmt.Sprintf("/n%d", i):
			fired++
		case ev.Type == zk.EventNotWatching && ev.Path == fmt.Sprintf("/n%d", i):
			ended++
		default:
			t.Fatalf("watch %d: event %+v", i, ev)
		}
		if ev, ok := <-ch; ok {
			t.Fatalf("watch %d: a second event %+v", i, ev)
		}
	}
	t.Logf("%d watches fired, %d ended by Close", fired, ended)
}
