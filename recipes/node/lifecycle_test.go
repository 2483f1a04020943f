package node_test

import (
	"errors"
	"testing"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/node"
)

// The lifecycle table of a Node: each call in each phase has its
// documented result, and every sequence leaves nothing on the server (no
// node, no watch of the Node's session); goleak checks the goroutines at
// the package's end.
func TestLifecycle(t *testing.T) {
	t.Parallel()
	type step struct {
		what string
		do   func(t *testing.T, n *node.Node) error
		want error // nil: success
	}
	startS := func(want error) step {
		return step{"Start", func(t *testing.T, n *node.Node) error { return n.Start(testkit.Ctx(t)) }, want}
	}
	closeS := step{"Close", func(t *testing.T, n *node.Node) error { return n.Close(testkit.Ctx(t)) }, nil}
	setData := func(want error) step {
		return step{"SetData", func(t *testing.T, n *node.Node) error { return n.SetData(testkit.Ctx(t), []byte("new")) }, want}
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"start twice", []step{startS(nil), startS(node.ErrAlreadyStarted), closeS}},
		{"close twice", []step{startS(nil), closeS, closeS}},
		{"close before start", []step{closeS, startS(node.ErrClosed), closeS}},
		{"start after close", []step{startS(nil), closeS, startS(node.ErrClosed)}},
		{"set data before start", []step{setData(nil), startS(nil), closeS}},
		{"set data after close", []step{startS(nil), closeS, setData(node.ErrClosed)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := testkit.Unique(t)
			c := testkit.Connect(t, zkAddr, ns)
			n := node.New(c, "/p", []byte("old"))
			for i, s := range tc.steps {
				if err := s.do(t, n); (s.want == nil) != (err == nil) || (s.want != nil && !errors.Is(err, s.want)) {
					t.Fatalf("step %d, %s: %v, want %v", i, s.what, err, s.want)
				}
			}
			if st := n.Status(); st.State != node.Closed || n.Registered() {
				t.Fatalf("after Close: %+v", st)
			}
			// Use after Close: Path stays, Data is unchanged by a refused
			// SetData, Listen registers nothing.
			if p := n.Path(); p != "" && p != "/p" {
				t.Fatalf("Path after Close %q", p)
			}
			if got := string(n.Data()); got != "old" && got != "new" {
				t.Fatalf("Data after Close %q", got)
			}
			if tc.name == "set data after close" && string(n.Data()) != "old" {
				t.Fatalf("a SetData after Close changed the data to %q", n.Data())
			}
			heard := make(chan node.Event, 1)
			cancel := n.Listen(func(ev node.Event) { heard <- ev })
			cancel()
			if err := n.Close(testkit.Ctx(t)); err != nil {
				t.Fatalf("Close again: %v", err)
			}
			select {
			case ev := <-heard:
				t.Fatalf("a listener added after Close heard %+v", ev)
			default:
			}
			if st := stat(t, c, "/p"); st != nil {
				t.Fatalf("node left: %+v", st)
			}
			testkit.AwaitWatchCount(t, zkAddr, 0, c)
		})
	}
}
