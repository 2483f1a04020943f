package leader_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/leader"
)

// Both layouts make Curator's nodes, hand over in sequence order and
// report participants as Curator's getParticipants does.
func TestLayoutsAndHandOver(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		opts     []leader.Option
		lockName string
	}{
		{"latch", nil, "-latch-"},
		{"selector", []leader.Option{leader.SelectorLayout()}, "-lock-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := testkit.Unique(t)
			ctx := testkit.Ctx(t)
			c1 := testkit.Connect(t, zkAddr, ns)
			c2 := testkit.Connect(t, zkAddr, ns)
			e1 := leader.New(c1, "/e", append(tc.opts, leader.WithID("one"))...)
			e2 := leader.New(c2, "/e", append(tc.opts, leader.WithID("two"))...)
			if _, err := e1.Leader(ctx); !errors.Is(err, leader.ErrNoLeader) {
				t.Fatalf("Leader before any campaign = %v, want ErrNoLeader", err)
			}
			t1, err := e1.Campaign(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(t1.Node(), "/e/_c_") || !strings.Contains(t1.Node(), tc.lockName) {
				t.Fatalf("node %s: not Curator's layout", t1.Node())
			}
			data, _, err := c1.Get(ctx, t1.Node())
			if err != nil || string(data) != "one" {
				t.Fatalf("node data %q, %v; want the id", data, err)
			}
			got := make(chan *leader.Term, 1)
			go func() {
				t2, err := e2.Campaign(ctx)
				if err != nil {
					t.Error(err)
				}
				got <- t2
			}()
			testkit.Eventually(t, "second candidate queued", func() bool { return len(testkit.Children(t, c1, "/e")) == 2 })
			ps, err := e2.Participants(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := []leader.Participant{{ID: "one", IsLeader: true}, {ID: "two"}}
			if len(ps) != 2 || ps[0] != want[0] || ps[1] != want[1] {
				t.Fatalf("participants %+v, want %+v", ps, want)
			}
			if err := t1.Resign(ctx); err != nil {
				t.Fatal(err)
			}
			var t2 *leader.Term
			select {
			case t2 = <-got:
			case <-ctx.Done():
				t.Fatal("no hand-over")
			}
			if t2 == nil {
				t.FailNow()
			}
			if t2.Token() <= t1.Token() {
				t.Fatalf("tokens %d then %d: not increasing", t1.Token(), t2.Token())
			}
			if l, err := e1.Leader(ctx); err != nil || l.ID != "two" || !l.IsLeader {
				t.Fatalf("leader %+v, %v; want two", l, err)
			}
			if err := t1.Resign(ctx); !errors.Is(err, leader.ErrNotLeader) {
				t.Fatalf("second Resign = %v, want ErrNotLeader", err)
			}
			if err := t2.Resign(ctx); err != nil {
				t.Fatal(err)
			}
			if n := testkit.Children(t, c1, "/e"); len(n) != 0 {
				t.Fatalf("nodes left: %v", n)
			}
		})
	}
}

// An empty id: the latch writes empty data (LeaderLatch), the selector the
// client's default data (LeaderSelector's mutex).
func TestEmptyIDData(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, ns, framework.WithDefaultData([]byte("host-a")))
	for _, tc := range []struct {
		opts []leader.Option
		want string
	}{{nil, ""}, {[]leader.Option{leader.SelectorLayout()}, "host-a"}} {
		term, err := leader.New(c, "/e", tc.opts...).Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		data, _, err := c.Get(ctx, term.Node())
		if err != nil || string(data) != tc.want {
			t.Fatalf("data %q, %v; want %q", data, err, tc.want)
		}
		if err := term.Resign(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// A cancelled or timed-out campaign leaves no node and a non-nil error.
func TestCancelledCampaignLeavesNothing(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, ns)
	e := leader.New(c, "/e")
	term, err := e.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		t2, err := e.Campaign(cctx)
		if t2 != nil {
			t.Error("a term with a cancelled campaign")
		}
		errc <- err
	}()
	testkit.Eventually(t, "candidate queued", func() bool { return len(testkit.Children(t, c, "/e")) == 2 })
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled campaign = %v, want Canceled", err)
	}
	if n := testkit.Children(t, c, "/e"); len(n) != 1 {
		t.Fatalf("children after the cancelled campaign: %v", n)
	}
	if err := term.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if n := testkit.Children(t, c, "/e"); len(n) != 0 {
		t.Fatalf("children at the end: %v", n)
	}
}
