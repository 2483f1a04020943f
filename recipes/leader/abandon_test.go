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
// for may still reach the server. A Campaign (or Run) whose ctx ends while
// its create is on the wire must not leave a node that is applied later
// and then elected: a ghost leader every other candidate waits behind,
// with no term anywhere. The create goes through a proxy that delays each
// way, and the ctx ends at points spread over the create's round trip (and
// after it, while the candidate waits behind a leader). After each, the
// candidate's client syncs (its session's requests are answered in order,
// so any create it sent has been applied by then), and the server must
// come to hold the leader's node alone: the framework deletes an abandoned
// protected create's node once its reply is in. No term is ever given for
// it; at the end, once the leader resigned, nobody leads and nothing is
// left.
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
	var longest time.Duration // the longest an abandoned node outlived the Sync
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
			err := call.call(cctx)
			cancel()
			if err != nil && !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("%s = %v, want DeadlineExceeded", what, err)
			}
			// Behind every request the candidate's session sent: a create
			// it sent has been applied by then. The framework deletes what
			// an abandoned protected create made once its reply is in (it
			// never gave it to the caller); the node must go, by itself.
			if err := c.Sync(ctx, "/"); err != nil {
				t.Fatal(err)
			}
			synced := time.Now()
			testkit.Eventually(t, what+": the leader's node alone", func() bool {
				var got []string
				for _, n := range testkit.Children(t, direct, "/e") {
					got = append(got, "/e/"+n)
				}
				return fmt.Sprint(got) == fmt.Sprint(want)
			})
			if d := time.Since(synced); d > longest {
				longest = d
			}
		}
	}
	t.Logf("led %d times of %d; an abandoned node outlived the Sync by %v at most", led, 2*10, longest)
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
