package node_test

import (
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/node"
)

// A wake-up is not the condition (pitfall 26): a Start waiting for another
// session's node to go is woken by that node's deletion, but the other
// session makes it again in the same transaction. The Node must look
// again, find the new incarnation and go on waiting, never register on it
// or overwrite it; it registers once the path is really free.
func TestWaitForOwnerLooksAgainAfterAWakeUp(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	other := testkit.Connect(t, zkAddr, ns)
	c := testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
	if _, err := other.Create(ctx, "/p", []byte("theirs"), framework.WithMode(framework.Ephemeral)); err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zap.WarnLevel)
	n := node.New(c, "/p", []byte("ours"), node.WithLogger(zap.New(core)))
	defer closeNode(t, n)
	done := make(chan error, 1)
	go func() { done <- n.Start(ctx) }()
	waits := func() int { return logs.FilterMessageSnippet("waiting for it to go").Len() }
	testkit.Eventually(t, "Start waiting on the other's node", func() bool { return waits() == 1 })
	testkit.AwaitWatch(t, zkAddr, c, "/p")
	old := stat(t, other, "/p")
	if _, err := other.Multi(ctx, framework.DeleteOp("/p", -1), framework.CreateOp("/p", []byte("theirs again"), framework.Ephemeral)); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "Start waiting again, on the new incarnation", func() bool { return waits() == 2 })
	select {
	case err := <-done:
		t.Fatalf("Start returned %v on a wake-up while the path is held", err)
	default:
	}
	st := stat(t, other, "/p")
	if st == nil || st.Czxid == old.Czxid || st.EphemeralOwner != other.SessionID() || data(t, other, "/p") != "theirs again" || n.Registered() {
		t.Fatalf("node %+v (registered %v): the other's new incarnation was touched", st, n.Registered())
	}
	if err := other.Delete(ctx, "/p"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Start once the path was free: %v", err)
	}
	if st := stat(t, other, "/p"); st == nil || st.EphemeralOwner != c.SessionID() {
		t.Fatalf("node %+v, want ours", st)
	}
}
