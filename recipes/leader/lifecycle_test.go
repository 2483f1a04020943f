package leader_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/leader"
)

// Issue 33's lifecycle class for the election: every handle used out of
// order gives its documented result, and nothing is left behind (no node,
// no server watch; goroutines: the package's goleak).
func TestLifecycle(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, ns)
	e := leader.New(c, "/e", leader.WithID("one"))
	ended, cancel := context.WithCancel(ctx)
	cancel()

	for _, tc := range []struct {
		name string
		run  func(t *testing.T)
	}{
		{"Resign twice", func(t *testing.T) {
			term := mustLead(t, ctx, e)
			if err := term.Resign(ctx); err != nil {
				t.Fatal(err)
			}
			if err := term.Resign(ctx); !errors.Is(err, leader.ErrNotLeader) {
				t.Fatalf("second Resign = %v, want ErrNotLeader", err)
			}
		}},
		{"Resign(nil) refused, the term goes on", func(t *testing.T) {
			term := mustLead(t, ctx, e)
			//lint:ignore SA1012 the nil ctx is the case under test
			if err := term.Resign(nil); !errors.Is(err, framework.ErrInvalidOption) {
				t.Fatalf("Resign(nil) = %v, want ErrInvalidOption", err)
			}
			if err := term.Err(); err != nil {
				t.Fatalf("term ended by Resign(nil): %v", err)
			}
			if err := term.Resign(ctx); err != nil {
				t.Fatal(err)
			}
		}},
		{"a Term used after Resign", func(t *testing.T) {
			term := mustLead(t, ctx, e)
			token, node := term.Token(), term.Node()
			tctx := term.Context()
			if err := term.Resign(ctx); err != nil {
				t.Fatal(err)
			}
			if !isClosed(term.Done()) || !errors.Is(term.Err(), leader.ErrResigned) {
				t.Fatalf("after Resign: Done closed %v, Err %v; want closed, ErrResigned", isClosed(term.Done()), term.Err())
			}
			for what, ctx := range map[string]context.Context{"Context before Resign": tctx, "Context after Resign": term.Context()} {
				if !isClosed(ctx.Done()) || !errors.Is(ctx.Err(), context.Canceled) || !errors.Is(context.Cause(ctx), leader.ErrResigned) {
					t.Fatalf("%s: Done closed %v, Err %v, Cause %v; want closed, Canceled, ErrResigned",
						what, isClosed(ctx.Done()), ctx.Err(), context.Cause(ctx))
				}
			}
			if _, err := term.CheckOp(); !errors.Is(err, leader.ErrResigned) {
				t.Fatalf("CheckOp after Resign = %v, want ErrResigned", err)
			}
			if _, err := term.FencedMulti(ctx, framework.CreateOp("/written", nil, framework.Persistent)); !errors.Is(err, leader.ErrResigned) {
				t.Fatalf("FencedMulti after Resign = %v, want ErrResigned", err)
			}
			if st, err := c.Exists(ctx, "/written"); err != nil || st != nil {
				t.Fatalf("FencedMulti after Resign wrote: %v, %v", st, err)
			}
			if term.Token() != token || term.Node() != node {
				t.Fatalf("Token, Node after Resign %d, %s; were %d, %s", term.Token(), term.Node(), token, node)
			}
			if l, err := e.Leader(ctx); !errors.Is(err, leader.ErrNoLeader) {
				t.Fatalf("Leader after Resign = %+v, %v; want ErrNoLeader", l, err)
			}
		}},
		{"Campaign and Run on an ended ctx", func(t *testing.T) {
			if term, err := e.Campaign(ended); term != nil || !errors.Is(err, context.Canceled) {
				t.Fatalf("Campaign(ended) = %v, %v; want nil, Canceled", term, err)
			}
			err := e.Run(ended, func(context.Context) error {
				t.Error("fn called with an ended ctx")
				return nil
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Run(ended) = %v, want Canceled", err)
			}
		}},
		{"nil ctx and nil fn refused", func(t *testing.T) {
			//lint:ignore SA1012 the nil ctx is the case under test
			if _, err := e.Campaign(nil); !errors.Is(err, framework.ErrInvalidOption) {
				t.Fatalf("Campaign(nil) = %v, want ErrInvalidOption", err)
			}
			//lint:ignore SA1012 the nil ctx is the case under test
			if err := e.Run(nil, func(context.Context) error { return nil }); !errors.Is(err, framework.ErrInvalidOption) {
				t.Fatalf("Run(nil ctx) = %v, want ErrInvalidOption", err)
			}
			if err := e.Run(ctx, nil); !errors.Is(err, framework.ErrInvalidOption) {
				t.Fatalf("Run(nil fn) = %v, want ErrInvalidOption", err)
			}
		}},
		{"Latch: Close twice, Await after Close", func(t *testing.T) {
			lt := e.Start(leader.Listener{})
			if _, err := lt.Await(ctx); err != nil {
				t.Fatal(err)
			}
			for i := range 2 {
				if err := lt.Close(ctx); err != nil {
					t.Fatalf("Close #%d = %v", i+1, err)
				}
			}
			if lt.HasLeadership() || lt.Term() != nil || lt.Err() != nil || !isClosed(lt.Done()) {
				t.Fatalf("after Close: HasLeadership %v, Term %v, Err %v, Done closed %v",
					lt.HasLeadership(), lt.Term(), lt.Err(), isClosed(lt.Done()))
			}
			if _, err := lt.Await(ctx); !errors.Is(err, leader.ErrNotLeader) {
				t.Fatalf("Await after Close = %v, want ErrNotLeader", err)
			}
		}},
		{"nil Election, Term and Latch", func(t *testing.T) {
			var ne *leader.Election
			if _, err := ne.Campaign(ctx); !errors.Is(err, leader.ErrNilHandle) {
				t.Fatalf("nil Election's Campaign = %v", err)
			}
			if err := ne.Run(ctx, func(context.Context) error { return nil }); !errors.Is(err, leader.ErrNilHandle) {
				t.Fatalf("nil Election's Run = %v", err)
			}
			if _, err := ne.Leader(ctx); !errors.Is(err, leader.ErrNilHandle) {
				t.Fatalf("nil Election's Leader = %v", err)
			}
			if _, err := ne.Participants(ctx); !errors.Is(err, leader.ErrNilHandle) {
				t.Fatalf("nil Election's Participants = %v", err)
			}
			if _, ok := <-ne.Observe(ctx); ok {
				t.Fatal("nil Election's Observe delivered an event")
			}
			if ne.Path() != "" || ne.ID() != "" {
				t.Fatal("nil Election's Path or ID not empty")
			}
			nlt := ne.Start(leader.Listener{})
			testkit.WaitClosed(t, nlt.Done(), "a nil Election's latch stopped")
			if !errors.Is(nlt.Err(), leader.ErrNilHandle) {
				t.Fatalf("nil Election's latch Err = %v", nlt.Err())
			}
			if err := nlt.Close(ctx); err != nil {
				t.Fatal(err)
			}

			var nt *leader.Term
			if !isClosed(nt.Done()) || !errors.Is(nt.Err(), leader.ErrNotLeader) || nt.Token() != 0 || nt.Node() != "" {
				t.Fatal("nil Term is not an ended term")
			}
			if err := nt.Resign(ctx); !errors.Is(err, leader.ErrNotLeader) {
				t.Fatalf("nil Term's Resign = %v", err)
			}
			if _, err := nt.CheckOp(); !errors.Is(err, leader.ErrNotLeader) {
				t.Fatalf("nil Term's CheckOp = %v", err)
			}
			if _, err := nt.FencedMulti(ctx); !errors.Is(err, leader.ErrNotLeader) {
				t.Fatalf("nil Term's FencedMulti = %v", err)
			}
			if tctx := nt.Context(); !isClosed(tctx.Done()) || !errors.Is(context.Cause(tctx), leader.ErrNotLeader) {
				t.Fatalf("nil Term's Context: Done closed %v, Cause %v", isClosed(tctx.Done()), context.Cause(tctx))
			}
			if leader.FromContext(ctx) != nil {
				t.Fatal("FromContext of a plain ctx")
			}

			var nl *leader.Latch
			if _, err := nl.Await(ctx); !errors.Is(err, leader.ErrNilHandle) {
				t.Fatalf("nil Latch's Await = %v", err)
			}
			if nl.HasLeadership() || nl.Term() != nil || !isClosed(nl.Done()) || !errors.Is(nl.Err(), leader.ErrNilHandle) ||
				!errors.Is(nl.Close(ctx), leader.ErrNilHandle) {
				t.Fatal("nil Latch is not a stopped latch")
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t)
			if n := testkit.Children(t, c, "/e"); len(n) != 0 {
				t.Fatalf("nodes left: %v", n)
			}
			testkit.AwaitWatchCount(t, zkAddr, 0, c)
		})
	}
}

// mustLead campaigns and fails the test unless e leads at once.
func mustLead(t *testing.T, ctx context.Context, e *leader.Election) *leader.Term {
	t.Helper()
	term, err := e.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return term
}
