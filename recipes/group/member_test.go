package group_test

import (
	"errors"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/group"
)

func startMember(t *testing.T, m *group.Member) {
	t.Helper()
	if err := m.Start(testkit.Ctx(t)); err != nil {
		t.Fatalf("start %s: %v", m.ID(), err)
	}
}

func closeMember(t *testing.T, m *group.Member) {
	t.Helper()
	if err := m.Close(testkit.Ctx(t)); err != nil {
		t.Fatalf("close %s: %v", m.ID(), err)
	}
}

func membersOf(m *group.Member) map[string]string {
	out := map[string]string{}
	for id, p := range m.Members() {
		out[id] = string(p)
	}
	return out
}

func awaitMembers(t *testing.T, m *group.Member, want map[string]string) {
	t.Helper()
	testkit.Eventually(t, "members "+m.ID()+" sees", func() bool { return maps.Equal(membersOf(m), want) })
}

// events collects a member's Listen events.
type events struct {
	mu  sync.Mutex
	evs []group.Event
}

func (e *events) add(ev group.Event) { e.mu.Lock(); e.evs = append(e.evs, ev); e.mu.Unlock() }

func (e *events) has(typ group.EventType, id, payload string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range e.evs {
		if ev.Type == typ && ev.ID == id && string(ev.Payload) == payload {
			return true
		}
	}
	return false
}

// Members on three clients see each other, payloads included; the change
// stream reports joins, payload updates and departures; Close deletes the
// member's node and leaves no watch.
func TestMembersSeeEachOther(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	var ms []*group.Member
	var cs []*framework.Client
	for _, id := range []string{"a", "b", "c"} {
		c := testkit.Connect(t, zkAddr, ns)
		cs = append(cs, c)
		ms = append(ms, group.New(c, "/group", id, []byte("payload-"+id)))
	}
	var evs events
	cancel := ms[0].Listen(evs.add)
	defer cancel()
	for _, m := range ms {
		startMember(t, m)
	}
	all := map[string]string{"a": "payload-a", "b": "payload-b", "c": "payload-c"}
	for _, m := range ms {
		awaitMembers(t, m, all)
	}
	testkit.Eventually(t, "a hears b and c join", func() bool {
		return evs.has(group.Joined, "b", "payload-b") && evs.has(group.Joined, "c", "payload-c")
	})
	if err := ms[1].SetPayload(ctx, []byte("new-b")); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "a hears b's update", func() bool { return evs.has(group.Updated, "b", "new-b") })
	closeMember(t, ms[2])
	delete(all, "c")
	all["b"] = "new-b"
	awaitMembers(t, ms[0], all)
	testkit.Eventually(t, "a hears c leave", func() bool { return evs.has(group.Left, "c", "payload-c") })
	if st, _ := cs[0].Exists(ctx, "/group/c"); st != nil {
		t.Fatalf("c's node left after Close: %+v", st)
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, cs[2])
	closeMember(t, ms[0])
	closeMember(t, ms[1])
	testkit.AwaitWatchCount(t, zkAddr, 0, cs...)
	testkit.Eventually(t, "the group's container reaped", func() bool {
		st, err := cs[0].Exists(ctx, "/group")
		return err == nil && st == nil
	})
}

// Curator's GroupMember layout: <path>/<id>, EPHEMERAL, the payload as
// data; a nil payload is the client's default data (its local address).
func TestLayout(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
	m := group.New(c, "/services/api", "host-1", nil)
	defer closeMember(t, m)
	startMember(t, m)
	b, st, err := c.Get(ctx, "/services/api/host-1")
	if err != nil {
		t.Fatal(err)
	}
	if st.EphemeralOwner != c.SessionID() || string(b) != string(c.DefaultData()) {
		t.Fatalf("node data %q owner 0x%x; want %q, 0x%x", b, st.EphemeralOwner, c.DefaultData(), c.SessionID())
	}
	if !m.Node().Registered() || m.Node().Path() != "/services/api/host-1" {
		t.Fatalf("node %+v", m.Node().Status())
	}
}

// Two members with one id: the second, with FailIfOwned, fails with
// ErrOwnedByOtherSession and the first keeps its node and payload (Curator's GroupMember would
// share one node between the two).
func TestDuplicateID(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	c1 := testkit.Connect(t, zkAddr, ns)
	c2 := testkit.Connect(t, zkAddr, ns)
	first := group.New(c1, "/g", "same", []byte("first"))
	defer closeMember(t, first)
	startMember(t, first)
	second := group.New(c2, "/g", "same", []byte("second"), group.FailIfOwned())
	if err := second.Start(testkit.Ctx(t)); !errors.Is(err, group.ErrOwnedByOtherSession) {
		t.Fatalf("second Start = %v, want ErrOwnedByOtherSession", err)
	}
	closeMember(t, second)
	awaitMembers(t, first, map[string]string{"same": "first"})
	testkit.AwaitWatchCount(t, zkAddr, 0, c2)

	// With WaitForOwner, the second joins once the first leaves.
	third := group.New(c2, "/g", "same", []byte("third"), group.WaitForOwner())
	defer closeMember(t, third)
	done := make(chan error, 1)
	go func() { done <- third.Start(testkit.Ctx(t)) }()
	testkit.AwaitWatch(t, zkAddr, c2, "/g/same")
	closeMember(t, first)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(testkit.Deadline):
		t.Fatal("third never joined")
	}
	awaitMembers(t, third, map[string]string{"same": "third"})
}

// Bad arguments are Start's errors, typed.
func TestInvalidArguments(t *testing.T) {
	t.Parallel()
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	for _, tc := range []struct {
		name string
		m    *group.Member
		want error
	}{
		{"nil client", group.New(nil, "/g", "a", nil), group.ErrNilClient},
		{"bad path", group.New(c, "g", "a", nil), group.ErrInvalidPath},
		{"empty id", group.New(c, "/g", "", nil), group.ErrInvalidID},
		{"id with slash", group.New(c, "/g", "a/b", nil), group.ErrInvalidID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.m.Start(testkit.Ctx(t)); !errors.Is(err, tc.want) {
				t.Fatalf("Start = %v, want %v", err, tc.want)
			}
			if err := tc.m.Close(testkit.Ctx(t)); err != nil {
				t.Fatal(err)
			}
		})
	}
}
