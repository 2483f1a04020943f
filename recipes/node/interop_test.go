package node_test

import (
	"errors"
	"testing"

	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/node"
)

// Apache Curator 5.4's PersistentNode (run by the Java driver) and ours on
// one path. Java first: ours refuses Java's node (ErrOwnedByOtherSession,
// with FailIfOwned; it would wait for it by default)
// and leaves it alone. Ours first: Curator takes ours over (CURATOR-154:
// it adopts any node at its path and writes its data), but the node stays
// owned by our session and ours still reports it truthfully; once ours
// closes, Curator makes its own node in its own session.
func TestInteropWithCuratorPersistentNode(t *testing.T) {
	t.Parallel()
	java := curatorjava.StartDriver(t, zkAddr)
	c := testkit.Connect(t, zkAddr, "") // no namespace: Java sees full paths
	ctx := testkit.Ctx(t)
	// A top-level path: Curator's parent creation fails for good when the
	// server reaps a shared container parent (/interop) between its steps.
	base := "/" + testkit.Unique(t)

	// Java first.
	p1 := base + "/java-first"
	java.MustDo("pnode j1 " + p1 + " EPHEMERAL java")
	if got := java.MustDo("pnodeWait j1 30000"); got != "true" {
		t.Fatalf("Java's waitForInitialCreate: %s", got)
	}
	javaOwner := stat(t, c, p1).EphemeralOwner
	ours := node.New(c, p1, []byte("go"), node.FailIfOwned())
	if err := ours.Start(ctx); !errors.Is(err, node.ErrOwnedByOtherSession) {
		t.Fatalf("Start on Java's node = %v, want ErrOwnedByOtherSession", err)
	}
	closeNode(t, ours)
	if st := stat(t, c, p1); st == nil || st.EphemeralOwner != javaOwner || data(t, c, p1) != "java" {
		t.Fatalf("Java's node after ours refused it: %+v %q", st, data(t, c, p1))
	}
	java.MustDo("pnodeClose j1")
	testkit.Eventually(t, "Java's node deleted", func() bool { return stat(t, c, p1) == nil })

	// Ours first.
	p2 := base + "/go-first"
	ours = node.New(c, p2, []byte("go"))
	start(t, ours)
	java.MustDo("pnode j2 " + p2 + " EPHEMERAL java")
	if got := java.MustDo("pnodeWait j2 30000"); got != "true" {
		t.Fatalf("Java's waitForInitialCreate: %s", got)
	}
	testkit.Eventually(t, "Curator writes its data on our node (CURATOR-154)", func() bool { return data(t, c, p2) == "java" })
	if st := stat(t, c, p2); st.EphemeralOwner != c.SessionID() || !ours.Registered() {
		t.Fatalf("our node %+v, registered %v: owner should still be our session 0x%x", st, ours.Registered(), c.SessionID())
	}
	closeNode(t, ours)
	testkit.Eventually(t, "Curator's own node, in its session", func() bool {
		st, err := c.Exists(ctx, p2)
		return err == nil && st != nil && st.EphemeralOwner != 0 && st.EphemeralOwner != c.SessionID()
	})
	java.MustDo("pnodeClose j2")
	testkit.Eventually(t, "nothing left", func() bool { return stat(t, c, p2) == nil })
}
