package leader_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/leader"
	"github.com/gocurator/curator/zktest"
)

// Issue 33's abandoned-write class: a request the library stops waiting
// for may still reach the server. A Campaign (or Run) whose ctx ended while
// its create was on the wire returned while the server made the node after
// the call, and the framework deleted it only once the late reply came: in
// between it stood in the election, the leader if nobody else campaigned
// (Leader reported a candidacy that had returned an error, and every later
// candidate waited behind it), and a Latch's Close returned while it
// stood. The create goes through a proxy that delays each way, and the ctx
// ends at points spread over the create's round trip (and after it, while
// the candidate waits behind a leader). Right after each call the
// candidate's client syncs (its session's requests are answered in order,
// so any create it sent has been applied by then) and the server must hold
// the leader's node alone. No term is ever given for an abandoned
// candidacy; at the end, once the leader resigned, nobody leads and
// nothing is left.
func TestAbandonedCampaignLeavesNoGhost(t *testing.T) {
	t.Parallel()
	for _, contended := range []bool{false, true} {
		t.Run(fmt.Sprintf("contended=%v", contended), func(t *testing.T) {
			t.Parallel()
			abandonCampaigns(t, contended)
		})
	}
}

// abandonCampaigns is TestAbandonedCampaignLeavesNoGhost with or without a
// leader ahead of the abandoned candidate. Without one, a Campaign whose
// create came back before its ctx ended may lead: it resigns, and the
// check is the same.
func abandonCampaigns(t *testing.T, contended bool) {
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	direct := testkit.Connect(t, zkAddr, ns)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns)
	const oneWay = 15 * time.Millisecond
	proxy.SetDelay(oneWay)

	var first *leader.Term
	var want []string // the leader's node, alone
	if contended {
		var err error
		if first, err = leader.New(direct, "/e", leader.WithID("leader")).Campaign(ctx); err != nil {
			t.Fatal(err)
		}
		want = []string{first.Node()}
	}
	e := leader.New(c, "/e", leader.WithID("abandoned"))
	led := 0
	var late time.Duration // the most a call returned after its ctx's end (plus the Syncs)
	calls := []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"Campaign", func(cctx context.Context) error {
			term, err := e.Campaign(cctx)
			if term != nil {
				if contended {
					t.Error("a term while another leads")
				}
				led++
				return term.Resign(ctx)
			}
			return err
		}},
		{"Run", func(cctx context.Context) error {
			return e.Run(cctx, func(fctx context.Context) error {
				if contended {
					t.Error("Run's fn called while another leads")
				}
				led++
				<-fctx.Done()
				return nil
			})
		}},
	}
	for _, call := range calls {
		for _, after := range []time.Duration{0, time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond,
			oneWay, 20 * time.Millisecond, 2 * oneWay, 40 * time.Millisecond, 3 * oneWay, 100 * time.Millisecond} {
			what := fmt.Sprintf("%s ended after %v", call.name, after)
			cctx, cancel := context.WithTimeout(ctx, after)
			start := time.Now()
			err := call.call(cctx)
			cancel()
			if err != nil && !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("%s = %v, want DeadlineExceeded", what, err)
			}
			// Behind every request the candidate's session sent: a create
			// it sent has been applied by then, so a node it left would
			// be on the server now.
			if err := c.Sync(ctx, "/"); err != nil {
				t.Fatal(err)
			}
			if err := direct.Sync(ctx, "/"); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, n := range testkit.Children(t, direct, "/e") {
				got = append(got, "/e/"+n)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%s: children %v right after the call, want %v", what, got, want)
			}
			if d := time.Since(start) - after; d > late {
				late = d
			}
		}
	}
	t.Logf("led %d times of %d; a call and the Syncs returned %v after ctx's end at most", led, 2*10, late)
	if first != nil {
		if err := first.Resign(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if l, err := e.Leader(ctx); !errors.Is(err, leader.ErrNoLeader) {
		t.Fatalf("Leader at the end = %+v, %v; want ErrNoLeader (a ghost leads)", l, err)
	}
	if n := testkit.Children(t, direct, "/e"); len(n) != 0 {
		t.Fatalf("nodes left: %v", n)
	}
}
