package leader_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/leader"
)

// Issue 33's slow- and blocked-listener class for the election. A Latch's
// IsLeader that blocks holds up only the latch's own goroutine: the client
// keeps working, the term still ends when its node is deleted (Done, Err,
// HasLeadership, all without the callback), Close resigns and deletes the
// node although the callback has not returned (returning ctx's error for
// the wait), and once the callback returns, NotLeader is called once, in
// order, with the term's reason.
func TestLatchBlockedListener(t *testing.T) {
	t.Parallel()
	for _, end := range []string{"node deleted", "Close"} {
		t.Run(end, func(t *testing.T) {
			t.Parallel()
			ns := testkit.Unique(t)
			ctx := testkit.Ctx(t)
			c := testkit.Connect(t, zkAddr, ns)
			op := testkit.Connect(t, zkAddr, ns)
			release := make(chan struct{})
			var mu sync.Mutex
			var calls []string
			record := func(s string) {
				mu.Lock()
				defer mu.Unlock()
				calls = append(calls, s)
			}
			notLeader := make(chan error, 2)
			lt := leader.New(c, "/e").Start(leader.Listener{
				IsLeader: func(*leader.Term) {
					record("IsLeader")
					<-release // blocked
				},
				NotLeader: func(err error) {
					record("NotLeader")
					notLeader <- err
				},
			})
			term, err := lt.Await(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// The client is not held up by the callback.
			other, err := leader.New(c, "/other").Campaign(ctx)
			if err != nil {
				t.Fatalf("another election on the client while the listener blocks: %v", err)
			}
			if err := other.Resign(ctx); err != nil {
				t.Fatal(err)
			}

			var want error
			switch end {
			case "node deleted":
				if err := op.Delete(ctx, term.Node()); err != nil {
					t.Fatal(err)
				}
				testkit.WaitClosed(t, term.Done(), "the term's end with the listener blocked")
				if !errors.Is(term.Err(), leader.ErrNodeDeleted) || lt.HasLeadership() {
					t.Fatalf("term Err %v, HasLeadership %v; want ErrNodeDeleted, false", term.Err(), lt.HasLeadership())
				}
				want = leader.ErrNodeDeleted
			case "Close":
				cctx, cancel := context.WithCancel(ctx)
				cancel() // the callback blocks: Close cannot wait for the latch
				if err := lt.Close(cctx); !errors.Is(err, context.Canceled) {
					t.Fatalf("Close with the listener blocked = %v, want its ctx's error", err)
				}
				if !errors.Is(term.Err(), leader.ErrResigned) {
					t.Fatalf("term Err after Close = %v, want ErrResigned", term.Err())
				}
				if err := op.Sync(ctx, "/e"); err != nil {
					t.Fatal(err)
				}
				if n := testkit.Children(t, op, "/e"); len(n) != 0 {
					t.Fatalf("nodes left by Close with the listener blocked: %v", n)
				}
				want = leader.ErrResigned
			}
			select {
			case err := <-notLeader:
				t.Fatalf("NotLeader (%v) before IsLeader returned", err)
			default:
			}
			close(release)
			if err := await(t, notLeader, "NotLeader"); !errors.Is(err, want) {
				t.Fatalf("NotLeader(%v), want %v", err, want)
			}
			if err := lt.Close(ctx); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			got := fmt.Sprint(calls)
			mu.Unlock()
			// After a deleted node the latch campaigns again and leads
			// again before Close: then a second IsLeader, NotLeader pair.
			if got != "[IsLeader NotLeader]" && (end == "Close" || got != "[IsLeader NotLeader IsLeader NotLeader]") {
				t.Fatalf("listener calls %s", got)
			}
			if n := testkit.Children(t, op, "/e"); len(n) != 0 {
				t.Fatalf("nodes left: %v", n)
			}
		})
	}
}
