package leader_test

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/leader"
	"github.com/gocurator/curator/recipes/rwlock"
)

// layouts are the election's two layouts, as options and as the Java
// driver's command making Curator's recipe of that layout.
var layouts = []struct {
	name string
	opts []leader.Option
	java string
}{
	{"latch", nil, "latch"},
	{"selector", []leader.Option{leader.SelectorLayout()}, "selector"},
}

// A LeaderLatch and a LeaderSelector each sort only their own nodes
// ("latch-", "lock-"), so on one path each elected a leader of its own:
// two leaders, no sign. The layout that comes second must refuse with
// ErrLayoutMismatch, naming the node it found, from every call that reads
// or campaigns (Campaign, Run, Start, Leader, Participants), and leave no
// node; the first layout's leader goes on.
func TestLayoutMismatchRefusedBothWays(t *testing.T) {
	t.Parallel()
	for i, first := range layouts {
		second := layouts[1-i]
		t.Run(second.name+" on "+first.name, func(t *testing.T) {
			t.Parallel()
			ns := testkit.Unique(t)
			ctx := testkit.Ctx(t)
			c1 := testkit.Connect(t, zkAddr, ns)
			c2 := testkit.Connect(t, zkAddr, ns)
			held, err := leader.New(c1, "/e", append(first.opts, leader.WithID("first"))...).Campaign(ctx)
			if err != nil {
				t.Fatal(err)
			}
			e := leader.New(c2, "/e", append(second.opts, leader.WithID("second"))...)
			checkRefused(t, ctx, e, c2, path.Base(held.Node()))
			if err := held.Err(); err != nil {
				t.Fatalf("the first layout's term ended: %v", err)
			}
			if err := held.Resign(ctx); err != nil {
				t.Fatal(err)
			}
			if n := testkit.Children(t, c1, "/e"); len(n) != 0 {
				t.Fatalf("nodes left: %v", n)
			}
		})
	}
}

// The same with Curator 5.4 on the first side: a Go election refuses a
// path where Curator's LeaderLatch or LeaderSelector leads, and leaves the
// Java leader leading. (Curator does not look for our layout: a Java
// candidate that comes second is not refused, see docs/leader.md.)
func TestLayoutMismatchRefusedBesideCurator(t *testing.T) {
	for i, first := range layouts {
		second := layouts[1-i]
		t.Run(second.name+" on Curator's "+first.name, func(t *testing.T) {
			java := curatorjava.StartDriver(t, zkAddr)
			c := testkit.Connect(t, zkAddr, "") // no namespace: Java sees full paths
			ctx := testkit.Ctx(t)
			p := "/mismatch/" + testkit.Unique(t)
			java.MustDo(first.java + " j " + p + " java")
			if err := java.WaitEvent("leader j true", 30*time.Second); err != nil {
				t.Fatal(err)
			}
			javaNodes := testkit.Children(t, c, p)
			if len(javaNodes) != 1 {
				t.Fatalf("Java's nodes: %v", javaNodes)
			}
			e := leader.New(c, p, append(second.opts, leader.WithID("go"))...)
			checkRefused(t, ctx, e, c, javaNodes[0])
			if got := java.MustDo("hasLeadership j"); got != "true" {
				t.Fatalf("Java's hasLeadership after Go's refusal: %s", got)
			}
			if first.java == "selector" {
				java.MustDo("yield j")
			}
			java.MustDo("close j")
			testkit.Eventually(t, "no node left", func() bool { return len(testkit.Children(t, c, p)) == 0 })
		})
	}
}

// Neither layout sorts a read/write lock's nodes ("__READ__", "__WRIT__"),
// so an election on a path where a lock is held would lead beside the
// holder: both layouts refuse such a path too.
func TestLayoutMismatchRefusedBesideReadWriteLock(t *testing.T) {
	t.Parallel()
	for _, l := range layouts {
		for _, write := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/write=%v", l.name, write), func(t *testing.T) {
				t.Parallel()
				ns := testkit.Unique(t)
				ctx := testkit.Ctx(t)
				c := testkit.Connect(t, zkAddr, ns)
				rw := rwlock.New(c, "/e")
				var lock interface {
					Acquire(context.Context) error
					Release(context.Context) error
					Node() string
				} = rw.ReadLock()
				if write {
					lock = rw.WriteLock()
				}
				if err := lock.Acquire(ctx); err != nil {
					t.Fatal(err)
				}
				checkRefused(t, ctx, leader.New(c, "/e", l.opts...), c, path.Base(lock.Node()))
				if err := lock.Release(ctx); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// checkRefused checks that every call of e that campaigns or reads refuses
// the path, which holds only the other layout's node found, and that no
// node of e's is left afterwards (checked on the server after a Sync).
func checkRefused(t *testing.T, ctx context.Context, e *leader.Election, c *framework.Client, found string) {
	t.Helper()
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, leader.ErrLayoutMismatch) || !errors.Is(err, framework.ErrLayoutMismatch) {
			t.Fatalf("%s = %v, want ErrLayoutMismatch", what, err)
		}
		if !strings.Contains(err.Error(), found) {
			t.Fatalf("%s = %v: does not name the node found, %s", what, err, found)
		}
	}
	term, err := e.Campaign(ctx)
	if term != nil {
		t.Fatal("Campaign returned a term on the other layout's path")
	}
	refused("Campaign", err)
	refused("Run", e.Run(ctx, func(context.Context) error {
		t.Error("Run's fn called on the other layout's path")
		return nil
	}))
	lt := e.Start(leader.Listener{IsLeader: func(*leader.Term) { t.Error("latch led on the other layout's path") }})
	testkit.WaitClosed(t, lt.Done(), "the latch stopped")
	refused("Latch.Err", lt.Err())
	if err := lt.Close(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = e.Leader(ctx)
	refused("Leader", err)
	_, err = e.Participants(ctx)
	refused("Participants", err)
	if err := c.Sync(ctx, e.Path()); err != nil {
		t.Fatal(err)
	}
	if n := testkit.Children(t, c, e.Path()); len(n) != 1 || n[0] != found {
		t.Fatalf("children after the refusals %v, want only %s", n, found)
	}
}
