package oneshot

import (
	"errors"
	"slices"
	"testing"

	"github.com/go-zookeeper/zk"
)

// step is a change made by the test and the events it must bring, in
// order, before the next step is made.
type step struct {
	name string
	do   func(r *rig) error
	want []Event
}

func create(rel string) func(r *rig) error {
	return func(r *rig) error {
		_, err := r.c.conn.Create(r.path(rel), []byte("x"), 0, zk.WorldACL(zk.PermAll))
		return err
	}
}

func set(rel string) func(r *rig) error {
	return func(r *rig) error {
		_, err := r.c.conn.Set(r.path(rel), []byte("y"), -1)
		return err
	}
}

func del(rel string) func(r *rig) error {
	return func(r *rig) error { return r.c.conn.Delete(r.path(rel), -1) }
}

// run makes each step and checks its events.
func (r *rig) run(steps []step) {
	r.t.Helper()
	for _, s := range steps {
		if err := s.do(r); err != nil {
			r.t.Fatalf("%s: %v", s.name, err)
		}
		for i := range s.want {
			s.want[i].Path = r.path(s.want[i].Path)
		}
		r.expect(s.want...)
	}
}

// A node's life as its exists and children watches show it: created,
// data changed, children changed, deleted, created again.
func TestRunNode(t *testing.T) {
	r := newRig(t)
	r.start(Watch{}, false)
	r.run([]step{
		{"create", create(""), []Event{{Type: Created}}},
		{"set", set(""), []Event{{Type: DataChanged}}},
		{"child", create("a"), []Event{{Type: ChildrenChanged}}},
		{"child deleted", del("a"), []Event{{Type: ChildrenChanged}}},
		{"delete", del(""), []Event{{Type: Deleted}}},
		{"create again", create(""), []Event{{Type: Created}}},
	})
}

// A subtree's life: nodes created below the root are reported with their
// own paths, a subtree deleted deepest first.
func TestRunTree(t *testing.T) {
	r := newRig(t)
	r.start(Watch{}, true)
	r.run([]step{
		{"root", create(""), []Event{{Type: Created}}},
		{"child", create("a"), []Event{{Type: Created, Path: "a"}}},
		{"grandchild", create("a/b"), []Event{{Type: Created, Path: "a/b"}}},
		{"set grandchild", set("a/b"), []Event{{Type: DataChanged, Path: "a/b"}}},
		{"set root", set(""), []Event{{Type: DataChanged}}},
		{"grandchild deleted", del("a/b"), []Event{{Type: Deleted, Path: "a/b"}}},
		{"child deleted", del("a"), []Event{{Type: Deleted, Path: "a"}}},
		{"root deleted", del(""), []Event{{Type: Deleted}}},
	})
}

// A tree that exists when the run starts is loaded without events, and
// its nodes are watched from then on.
func TestRunTreeLoadsExisting(t *testing.T) {
	r := newRig(t)
	for _, rel := range []string{"", "a", "a/b"} {
		if err := create(rel)(r); err != nil {
			t.Fatal(err)
		}
	}
	r.start(Watch{}, true)
	r.run([]step{
		{"set deep", set("a/b"), []Event{{Type: DataChanged, Path: "a/b"}}},
		{"new leaf", create("a/c"), []Event{{Type: Created, Path: "a/c"}}},
	})
}

// A strict run whose root the client may not list ends, refused with
// zk.ErrNoAuth, and gives back the watch it set before the refusal.
func TestUnreadableRootRefused(t *testing.T) {
	for _, tt := range []struct {
		name string
		tree bool
	}{
		{"node", false},
		{"tree", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			if _, err := r.c.conn.Create(r.root, nil, 0, zk.WorldACL(zk.PermAll&^zk.PermRead)); err != nil {
				t.Fatal(err)
			}
			r.start(Watch{Strict: true}, tt.tree)
			select {
			case <-r.done:
			case <-r.armed:
				t.Fatal("armed")
			}
			select {
			case err := <-r.refuse:
				if !errors.Is(err, zk.ErrNoAuth) {
					t.Fatalf("refused with %v, want zk.ErrNoAuth", err)
				}
			default:
				t.Fatal("ended without a refusal")
			}
			if len(r.c.givenBack()) == 0 {
				t.Fatal("the exists watch set before the refusal was not given back")
			}
		})
	}
}

// A run that is not strict arms on a node it may not read rather than
// waiting for a permission that never comes.
func TestUnreadableNodeArms(t *testing.T) {
	r := newRig(t)
	if _, err := r.c.conn.Create(r.root, nil, 0, zk.WorldACL(zk.PermAll&^zk.PermRead)); err != nil {
		t.Fatal(err)
	}
	r.start(Watch{}, false)
	select {
	case <-r.armed:
	default:
		t.Fatal("ended without arming")
	}
}

// A tree with a node the client may not read follows the readable nodes,
// and reports the unreadable node's deletion, seen in its parent's
// listing (the server withholds the events of a node from a client that
// may not read it).
func TestUnreadableChild(t *testing.T) {
	r := newRig(t)
	if err := create("")(r); err != nil {
		t.Fatal(err)
	}
	if _, err := r.c.conn.Create(r.path("a"), nil, 0, zk.WorldACL(zk.PermAll&^zk.PermRead)); err != nil {
		t.Fatal(err)
	}
	r.start(Watch{}, true)
	r.run([]step{
		{"readable sibling", create("b"), []Event{{Type: Created, Path: "b"}}},
		{"unreadable deleted", del("a"), []Event{{Type: Deleted, Path: "a"}}},
	})
}

// The watches still set when the run ends are given back: the node's
// exists and children watches; the tree's exists watch on the root, a
// data watch on each node below it and a children watch on each node.
func TestGiveBack(t *testing.T) {
	for _, tt := range []struct {
		name string
		tree bool
		want []string
	}{
		{"node", false, []string{"2 ", "3 "}},
		{"tree", true, []string{"2 ", "3 ", "1 /a", "3 /a"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			for _, rel := range []string{"", "a"} {
				if err := create(rel)(r); err != nil {
					t.Fatal(err)
				}
			}
			r.start(Watch{}, tt.tree)
			r.end()
			var want []string
			for _, w := range tt.want {
				want = append(want, w[:2]+r.root+w[2:])
			}
			got := r.c.givenBack()
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("given back %q, want %q", got, want)
			}
		})
	}
}
