package group_test

import (
	"errors"
	"testing"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/group"
)

// The lifecycle table of a Member: each call in each phase has its
// documented result, and every sequence leaves nothing on the server (no
// member node, no watch of the member's session); goleak checks the
// goroutines at the package's end.
func TestLifecycle(t *testing.T) {
	t.Parallel()
	type step struct {
		what string
		do   func(t *testing.T, m *group.Member) error
		want error // nil: success
	}
	startS := func(want error) step {
		return step{"Start", func(t *testing.T, m *group.Member) error { return m.Start(testkit.Ctx(t)) }, want}
	}
	closeS := step{"Close", func(t *testing.T, m *group.Member) error { return m.Close(testkit.Ctx(t)) }, nil}
	setPayload := func(want error) step {
		return step{"SetPayload", func(t *testing.T, m *group.Member) error {
			return m.SetPayload(testkit.Ctx(t), []byte("new"))
		}, want}
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"start twice", []step{startS(nil), startS(group.ErrAlreadyStarted), closeS}},
		{"close twice", []step{startS(nil), closeS, closeS}},
		{"close before start", []step{closeS, startS(group.ErrClosed), closeS}},
		{"start after close", []step{startS(nil), closeS, startS(group.ErrClosed)}},
		{"set payload before start", []step{setPayload(nil), startS(nil), closeS}},
		{"set payload after close", []step{startS(nil), closeS, setPayload(group.ErrClosed)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := testkit.Unique(t)
			c := testkit.Connect(t, zkAddr, ns)
			m := group.New(c, "/g", "m1", []byte("old"))
			for i, s := range tc.steps {
				if err := s.do(t, m); (s.want == nil) != (err == nil) || (s.want != nil && !errors.Is(err, s.want)) {
					t.Fatalf("step %d, %s: %v, want %v", i, s.what, err, s.want)
				}
			}
			// Use after Close: Members still lists this member, with the
			// payload it had; Listen registers nothing.
			if got, ok := m.Members()["m1"]; !ok || (string(got) != "old" && string(got) != "new") {
				t.Fatalf("Members after Close %q", m.Members())
			}
			if tc.name == "set payload after close" && string(m.Members()["m1"]) != "old" {
				t.Fatalf("a SetPayload after Close changed the payload to %q", m.Members()["m1"])
			}
			heard := make(chan group.Event, 1)
			cancel := m.Listen(func(ev group.Event) { heard <- ev })
			cancel()
			if err := m.Close(testkit.Ctx(t)); err != nil {
				t.Fatalf("Close again: %v", err)
			}
			select {
			case ev := <-heard:
				t.Fatalf("a listener added after Close heard %+v", ev)
			default:
			}
			if m.Node().Registered() {
				t.Fatal("registered after Close")
			}
			if kids := testkit.Children(t, c, "/g"); len(kids) != 0 {
				t.Fatalf("member nodes left: %q", kids)
			}
			testkit.AwaitWatchCount(t, zkAddr, 0, c)
		})
	}
}

// Close while Start waits (another session holds the id): Start returns
// ErrClosed, and nothing is left, the other's node untouched.
func TestCloseDuringStart(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	c1 := testkit.Connect(t, zkAddr, ns)
	c2 := testkit.Connect(t, zkAddr, ns)
	first := group.New(c1, "/g", "same", []byte("first"))
	defer closeMember(t, first)
	startMember(t, first)
	m := group.New(c2, "/g", "same", []byte("second"))
	done := make(chan error, 1)
	go func() { done <- m.Start(testkit.Ctx(t)) }()
	testkit.AwaitWatch(t, zkAddr, c2, "/g/same")
	closeMember(t, m)
	if err := <-done; !errors.Is(err, group.ErrClosed) {
		t.Fatalf("Start ended by Close = %v, want group.ErrClosed", err)
	}
	b, st, err := c2.Get(testkit.Ctx(t), "/g/same")
	if err != nil || st.EphemeralOwner != c1.SessionID() || string(b) != "first" {
		t.Fatalf("the first's node: %q %+v %v", b, st, err)
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, c2)
}
