package cache

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/zktest"
)

// The listener queue coalesces per path: the outcome survives, the
// steps do not, and a deletion is told before a new incarnation.
func TestListenerQueueCoalesces(t *testing.T) {
	n := func(d string) Node { return Node{Path: "/a", Data: []byte(d)} }
	tests := []struct {
		name string
		in   []Event
		want string
	}{
		{"created then changed", []Event{{Type: Created, Path: "/a", Node: n("1")}, {Type: Changed, Path: "/a", Node: n("2")}}, "[created /a 2]"},
		{"created then deleted", []Event{{Type: Created, Path: "/a", Node: n("1")}, {Type: Deleted, Path: "/a"}}, "[]"},
		{"changed twice", []Event{{Type: Changed, Path: "/a", Node: n("1")}, {Type: Changed, Path: "/a", Node: n("2")}}, "[changed /a 2]"},
		{"changed then deleted", []Event{{Type: Changed, Path: "/a", Node: n("1")}, {Type: Deleted, Path: "/a", Node: n("1")}}, "[deleted /a 1]"},
		{"deleted then created", []Event{{Type: Deleted, Path: "/a", Node: n("1")}, {Type: Created, Path: "/a", Node: n("2")}, {Type: Changed, Path: "/a", Node: n("3")}},
			"[deleted /a 1 created /a 3]"},
		{"deleted, created, deleted", []Event{{Type: Deleted, Path: "/a", Node: n("1")}, {Type: Created, Path: "/a", Node: n("2")}, {Type: Deleted, Path: "/a"}},
			"[deleted /a 1]"},
		{"resyncs merge", []Event{{Type: Resynced, Path: "/", Reason: Reconnected}, {Type: Resynced, Path: "/", Reason: NewSession}}, "[resynced / ]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newListener(nil)
			for _, ev := range tt.in {
				l.push(ev)
			}
			var got []string
			for {
				ev, ok, _ := l.next()
				if !ok {
					break
				}
				got = append(got, fmt.Sprintf("%v %s %s", ev.Type, ev.Path, ev.Node.Data))
			}
			if fmt.Sprint(got) != tt.want {
				t.Fatalf("got %v, want %s", got, tt.want)
			}
		})
	}
	// Churn on one path does not grow the queue.
	l := newListener(nil)
	for i := 0; i < 10000; i++ {
		l.push(Event{Type: Created, Path: "/a"})
		l.push(Event{Type: Deleted, Path: "/a"})
	}
	if len(l.q) > 200 {
		t.Fatalf("queue of %d entries after churn on one path", len(l.q))
	}
}

// A server that reports a change outside the watched tree (ClickHouse
// Keeper reports the watched path) makes the cache read everything
// again, Resynced{OutOfTree}, rather than cache it.
func TestOutOfTreeEventResyncs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), framework.WithNamespace(fmt.Sprintf("outoftree%d", time.Now().UnixNano())))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Create(ctx, "/r/a", []byte("a"), framework.CreatingParents()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, "/elsewhere", []byte("x")); err != nil {
		t.Fatal(err)
	}
	ch := New(c, "/r")
	defer ch.Close()
	if err := ch.Start(ctx); err != nil {
		t.Fatal(err)
	}
	got := make(chan Event, 10)
	defer ch.Listen(func(ev Event) { got <- ev })()
	ch.handle(framework.WatchEvent{Type: framework.WatchCreated, Path: "/elsewhere"})
	select {
	case ev := <-got:
		if ev.Type != Resynced || ev.Reason != OutOfTree {
			t.Fatalf("event %v %v, want resynced out-of-tree", ev.Type, ev.Reason)
		}
	case <-ctx.Done():
		t.Fatal("no resync")
	}
	if _, ok := ch.Get("/elsewhere"); ok || ch.Len() != 2 {
		t.Fatalf("out-of-tree node cached (Len %d)", ch.Len())
	}
}

// WithLoadSessions reads a load over that many sessions; by default a
// small tree is read over the client's session alone, a large one over
// more (autoLoad) unless the process's budget is spent, and
// WithLoadSessions(1) never opens one.
func TestLoadUsesItsSessions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Through a 2 ms round trip, as a remote server: a load of the large
	// tree outlasts the few round trips that open its sessions.
	proxy := zktest.NewProxy(t, os.Getenv("GOCURATOR_ZK"))
	proxy.SetDelay(time.Millisecond)
	c, err := framework.Connect(ctx, proxy.Addr(), framework.WithNamespace(fmt.Sprintf("loadsessions%d", time.Now().UnixNano())))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range 5 {
		if _, err := c.Create(ctx, fmt.Sprintf("/r/%d", i), nil, framework.CreatingParents()); err != nil {
			t.Fatal(err)
		}
	}
	// /big: 40 parents of 30 children each, 1,241 nodes.
	for i := range 40 {
		ops := []framework.Op{framework.CreateOp(fmt.Sprintf("/big/%d", i), nil, framework.Persistent)}
		for j := range 30 {
			ops = append(ops, framework.CreateOp(fmt.Sprintf("/big/%d/%d", i, j), nil, framework.Persistent))
		}
		if i == 0 {
			if _, err := c.Create(ctx, "/big", nil); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.Multi(ctx, ops...); err != nil {
			t.Fatal(err)
		}
	}
	spend := func() {
		for range cap(autoLoadBudget) {
			autoLoadBudget <- struct{}{}
		}
	}
	for _, tc := range []struct {
		name   string
		path   string
		opts   []Option
		before func()
		want   int32
		nodes  int
	}{
		{"small tree, default", "/r", nil, nil, 1, 6},
		{"small tree, 3 sessions", "/r", []Option{WithLoadSessions(3)}, nil, 3, 6},
		{"large tree, default", "/big", nil, nil, 1 + autoLoadExtra, 1241},
		{"large tree, one session", "/big", []Option{WithLoadSessions(1)}, nil, 1, 1241},
		{"large tree, budget spent", "/big", nil, spend, 1, 1241},
	} {
		if tc.before != nil {
			tc.before()
		}
		ch := New(c, tc.path, tc.opts...)
		if err := ch.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if got := ch.loadSessionsUsed.Load(); got != tc.want || ch.Len() != tc.nodes {
			t.Errorf("%s: loaded %d nodes over %d sessions, want %d over %d", tc.name, ch.Len(), got, tc.nodes, tc.want)
		}
		_ = ch.Close()
		if tc.before != nil {
			for range cap(autoLoadBudget) {
				<-autoLoadBudget
			}
		}
		if n := len(autoLoadBudget); n != 0 {
			t.Errorf("%s: %d load sessions still counted open after the load", tc.name, n)
		}
	}
	for _, p := range []string{"/r", "/big"} {
		if err := c.Delete(ctx, p, framework.DeletingChildren()); err != nil {
			t.Fatal(err)
		}
	}
}
