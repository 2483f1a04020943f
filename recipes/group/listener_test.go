package group_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/group"
	"github.com/gocurator/curator/recipes/node"
)

// A blocked listener of the group's changes keeps them in order and
// blocks nobody: another listener hears each change at once, Members
// follows the group, and Close returns.
func TestBlockedListener(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	c2 := testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
	m := group.New(c, "/g", "m1", []byte("p1"))
	release := make(chan struct{})
	blocked := make(chan group.Event, 64)
	stopBlocked := m.Listen(func(ev group.Event) {
		<-release
		blocked <- ev
	})
	defer stopBlocked()
	var (
		mu    sync.Mutex
		heard []group.Event
		more  = make(chan struct{}, 1)
	)
	stop := m.Listen(func(ev group.Event) {
		mu.Lock()
		heard = append(heard, ev)
		mu.Unlock()
		select {
		case more <- struct{}{}:
		default:
		}
	})
	defer stop()
	startMember(t, m)
	awaitHeard := func(typ group.EventType, id, payload string) {
		t.Helper()
		timer := time.NewTimer(testkit.Deadline)
		defer timer.Stop()
		for {
			mu.Lock()
			found := slices.ContainsFunc(heard, func(ev group.Event) bool {
				return ev.Type == typ && ev.ID == id && string(ev.Payload) == payload
			})
			mu.Unlock()
			if found {
				return
			}
			select {
			case <-more:
			case <-timer.C:
				t.Fatalf("never heard %v %s %s", typ, id, payload)
			}
		}
	}
	for i := range 3 {
		id := fmt.Sprintf("o%d", i)
		o := group.New(c2, "/g", id, []byte("a"))
		startMember(t, o)
		awaitHeard(group.Joined, id, "a")
		if err := o.SetPayload(ctx, []byte("b")); err != nil {
			t.Fatal(err)
		}
		awaitHeard(group.Updated, id, "b")
		closeMember(t, o)
		awaitHeard(group.Left, id, "b")
	}
	awaitMembers(t, m, map[string]string{"m1": "p1"})
	if !m.Node().Registered() {
		t.Fatalf("member not registered: %+v", m.Node().Status())
	}
	done := make(chan error, 1)
	go func() { done <- m.Close(context.Background()) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(testkit.Deadline):
		t.Fatal("Close held up by a blocked listener")
	}
	mu.Lock()
	want := slices.Clone(heard)
	mu.Unlock()
	close(release)
	var got []group.Event
	for len(got) < len(want) {
		select {
		case ev := <-blocked:
			got = append(got, ev)
		case <-time.After(testkit.Deadline):
			t.Fatalf("blocked listener heard %d of %d events", len(got), len(want))
		}
	}
	key := func(evs []group.Event) []string {
		var s []string
		for _, ev := range evs {
			s = append(s, fmt.Sprint(ev.Type, ev.ID, string(ev.Payload)))
		}
		return s
	}
	if !slices.Equal(key(got), key(want)) {
		t.Fatalf("blocked listener heard %v, want %v", key(got), key(want))
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, c)
}

// Item 1's class through a member: a member closed while its node is being
// made again (from its Node's Recreating event) leaves no member node, not
// even one made after Close returned.
func TestCloseWhileRejoiningLeavesNoGhost(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	admin := testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
	const members = 40
	for i := range members {
		id := fmt.Sprintf("m%02d", i)
		m := group.New(c, "/g", id, nil)
		closed := make(chan error, 1)
		var once sync.Once
		cancel := m.Node().Listen(func(ev node.Event) {
			if ev.State == node.Recreating {
				once.Do(func() { closed <- m.Close(ctx) })
			}
		})
		startMember(t, m)
		if err := admin.Delete(ctx, "/g/"+id); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-closed:
			if err != nil {
				t.Fatal(err)
			}
		case <-ctx.Done():
			t.Fatal("no Recreating heard")
		}
		cancel()
	}
	// Answered after every request c sent before it.
	if _, err := c.Exists(ctx, "/g"); err != nil {
		t.Fatal(err)
	}
	if err := admin.Sync(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	if kids := testkit.Children(t, admin, "/g"); len(kids) > 0 {
		t.Fatalf("member nodes left or made after Close: %q", kids)
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, c)
}
