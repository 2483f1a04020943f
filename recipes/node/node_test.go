package node_test

import (
	"errors"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/node"
)

// Start makes an ephemeral node owned by the live session, with the data;
// Close deletes it and leaves no watch on the server.
func TestStartAndClose(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	admin := testkit.Connect(t, zkAddr, ns)
	n := node.New(c, "/workers/w1", []byte("hello"))
	if n.Registered() || n.Path() != "" {
		t.Fatalf("before Start: registered %v, path %q", n.Registered(), n.Path())
	}
	start(t, n)
	if n.Path() != "/workers/w1" || !n.Registered() {
		t.Fatalf("after Start: path %q, registered %v", n.Path(), n.Registered())
	}
	st := stat(t, admin, "/workers/w1")
	if st == nil || st.EphemeralOwner != c.SessionID() {
		t.Fatalf("node %+v, want ephemeral of session 0x%x", st, c.SessionID())
	}
	if got := data(t, admin, "/workers/w1"); got != "hello" {
		t.Fatalf("data %q", got)
	}
	if s := n.Status(); s.State != node.Registered || s.Session != c.SessionID() || s.Czxid != st.Czxid {
		t.Fatalf("status %+v", s)
	}
	if err := n.Start(testkit.Ctx(t)); !errors.Is(err, node.ErrAlreadyStarted) {
		t.Fatalf("second Start: %v", err)
	}
	closeNode(t, n)
	if st := stat(t, admin, "/workers/w1"); st != nil {
		t.Fatalf("node left after Close: %+v", st)
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, c)
	if n.Status().State != node.Closed || n.Registered() {
		t.Fatalf("after Close: %+v", n.Status())
	}
	if err := n.Start(testkit.Ctx(t)); !errors.Is(err, node.ErrClosed) {
		t.Fatalf("Start after Close: %v", err)
	}
	if err := n.Close(testkit.Ctx(t)); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// An operator deletes the node: it is made again, with the latest data,
// and the state says why it went.
func TestRecreatedAfterOperatorDelete(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	admin := testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
	n := node.New(c, "/p", []byte("v1"))
	defer closeNode(t, n)
	rec := record(t, n)
	start(t, n)
	first := n.Status().Czxid
	if err := n.SetData(ctx, []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if got := data(t, admin, "/p"); got != "v2" {
		t.Fatalf("data after SetData %q", got)
	}
	if err := admin.Delete(ctx, "/p"); err != nil {
		t.Fatal(err)
	}
	_, i := rec.await(t, 0, "Recreating(ErrNodeDeleted)", recreating(node.ErrNodeDeleted))
	ev, _ := rec.await(t, i, "registered again", registered)
	if ev.Czxid == first {
		t.Fatalf("registered the deleted incarnation again: %+v", ev)
	}
	st := stat(t, admin, "/p")
	if st == nil || st.Czxid != ev.Czxid || st.EphemeralOwner != c.SessionID() {
		t.Fatalf("node %+v, event %+v", st, ev)
	}
	if got := data(t, admin, "/p"); got != "v2" {
		t.Fatalf("re-created node carries %q, want the latest data v2 (CURATOR-241)", got)
	}
}

// CURATOR-485: SetData before Start is allowed, and the node is made with
// it.
func TestSetDataBeforeStart(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	n := node.New(c, "/p", []byte("old"))
	defer closeNode(t, n)
	if err := n.SetData(testkit.Ctx(t), []byte("new")); err != nil {
		t.Fatal(err)
	}
	start(t, n)
	if got := data(t, c, "/p"); got != "new" {
		t.Fatalf("data %q", got)
	}
}

// Bad arguments are Start's errors, typed.
func TestInvalidArguments(t *testing.T) {
	t.Parallel()
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	for _, tc := range []struct {
		name string
		n    *node.Node
		want error
	}{
		{"nil client", node.New(nil, "/p", nil), node.ErrNilClient},
		{"relative path", node.New(c, "p", nil), node.ErrInvalidPath},
		{"root", node.New(c, "/", nil), node.ErrInvalidPath},
		{"TTL on ephemeral", node.New(c, "/p", nil, node.WithMode(framework.Ephemeral), node.WithTTL(1)), node.ErrInvalidOption},
		{"TTL mode without TTL", node.New(c, "/p", nil, node.WithMode(framework.PersistentWithTTL)), node.ErrInvalidOption},
		{"negative TTL", node.New(c, "/p", nil, node.WithTTL(-1)), node.ErrInvalidOption},
		{"ExpireAfterClose without TTL", node.New(c, "/p", nil, node.WithMode(framework.Persistent), node.ExpireAfterClose()), node.ErrInvalidOption},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.n.Start(testkit.Ctx(t)); !errors.Is(err, tc.want) {
				t.Fatalf("Start = %v, want %v", err, tc.want)
			}
			if err := tc.n.Close(testkit.Ctx(t)); err != nil {
				t.Fatalf("Close = %v", err)
			}
		})
	}
	var nilNode *node.Node
	if err := nilNode.Start(testkit.Ctx(t)); !errors.Is(err, node.ErrNilHandle) {
		t.Fatalf("nil Start = %v", err)
	}
	if nilNode.Registered() || nilNode.Path() != "" || nilNode.Close(testkit.Ctx(t)) != nil {
		t.Fatal("nil node reports something")
	}
}

// Closing the client ends the Node (Closed, no goroutine left) and its
// ephemeral node with the session; a Close after that has nothing to do.
func TestClientClosedFirst(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	admin := testkit.Connect(t, zkAddr, ns)
	n := node.New(c, "/p", nil)
	start(t, n)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the node gone with the session", func() bool { return stat(t, admin, "/p") == nil })
	if n.Registered() {
		t.Fatal("Registered after the client closed")
	}
	closeNode(t, n)
}
