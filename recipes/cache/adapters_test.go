package cache_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gocurator/curator/recipes/cache"
)

// The Curator-shaped adapters pass each event on under Curator's name, to
// the callback Curator would call, and leave out what Curator's listener
// would not hear of.
func TestAdaptersMapEvents(t *testing.T) {
	n := func(p, d string) cache.Node { return cache.Node{Path: p, Data: []byte(d)} }
	events := []cache.Event{
		{Type: cache.Created, Path: "/p", Node: n("/p", "r")},
		{Type: cache.Created, Path: "/p/a", Node: n("/p/a", "1")},
		{Type: cache.Created, Path: "/p/a/b", Node: n("/p/a/b", "b")},
		{Type: cache.Initialized, Path: "/p"},
		{Type: cache.Changed, Path: "/p/a", Old: n("/p/a", "1"), Node: n("/p/a", "2")},
		{Type: cache.Unreadable, Path: "/p/secret"},
		{Type: cache.Deleted, Path: "/p/a/b", Node: n("/p/a/b", "b")},
		{Type: cache.Resynced, Path: "/p", Reason: cache.Reconnected},
		{Type: cache.Deleted, Path: "/p/a", Node: n("/p/a", "2")},
		{Type: cache.Deleted, Path: "/p", Node: n("/p", "r")},
	}
	var got []string
	log := func(format string, args ...any) { got = append(got, fmt.Sprintf(format, args...)) }
	all := cache.Handlers{
		Creates:           func(n cache.Node) { log("create %s %s", n.Path, n.Data) },
		Changes:           func(o, n cache.Node) { log("change %s %s>%s", n.Path, o.Data, n.Data) },
		CreatesAndChanges: func(o, n cache.Node) { log("upsert %s %q>%s", n.Path, o.Path, n.Data) },
		Deletes:           func(n cache.Node) { log("delete %s %s", n.Path, n.Data) },
		Initialized:       func() { log("initialized") },
	}
	later := all
	later.AfterInitialized = true
	tests := []struct {
		name string
		fn   func(cache.Event)
		want []string
	}{
		{"Handlers", all.Listener(), []string{
			"create /p r", `upsert /p "">r`, "create /p/a 1", `upsert /p/a "">1`, "create /p/a/b b", `upsert /p/a/b "">b`,
			"initialized", "change /p/a 1>2", `upsert /p/a "/p/a">2`, "delete /p/a/b b", "delete /p/a 2", "delete /p r"}},
		{"Handlers after initialized", later.Listener(), []string{
			"initialized", "change /p/a 1>2", `upsert /p/a "/p/a">2`, "delete /p/a/b b", "delete /p/a 2", "delete /p r"}},
		{"ForPathChildren", cache.ForPathChildren("/p", func(ev cache.ChildEvent) { log("%v %s %s", ev.Type, ev.Node.Path, ev.Node.Data) }), []string{
			"CHILD_ADDED /p/a 1", "INITIALIZED  ", "CHILD_UPDATED /p/a 2", "CONNECTION_RECONNECTED  ", "CHILD_REMOVED /p/a 2"}},
		{"ForTree", cache.ForTree(func(ev cache.TreeEvent) { log("%v %s %s>%s", ev.Type, ev.Node.Path, ev.Old.Data, ev.Node.Data) }), []string{
			"NODE_ADDED /p >r", "NODE_ADDED /p/a >1", "NODE_ADDED /p/a/b >b", "INITIALIZED  >", "NODE_UPDATED /p/a 1>2",
			"NODE_REMOVED /p/a/b >b", "CONNECTION_RECONNECTED  >", "NODE_REMOVED /p/a >2", "NODE_REMOVED /p >r"}},
		{"ForNode", cache.ForNode("/p/a", func(n cache.Node, ok bool) { log("nodeChanged %s %s %v", n.Path, n.Data, ok) }), []string{
			"nodeChanged /p/a 1 true", "nodeChanged /p/a 2 true", "nodeChanged /p/a  false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got = nil
			for _, ev := range events {
				tt.fn(ev)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
	if cache.ForTree(nil) != nil || cache.ForPathChildren("/p", nil) != nil || cache.ForNode("/p", nil) != nil {
		t.Fatal("an adapter of a nil function is not nil")
	}
	cache.Handlers{}.Listener()(events[0]) // no field set: nothing called
	for _, s := range []fmt.Stringer{cache.ChildEventType(0), cache.TreeEventType(9)} {
		if s.String() == "" {
			t.Fatalf("%#v has no name", s)
		}
	}
}
