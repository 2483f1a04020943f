package node_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/node"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/zktest"
)

// crashed returns a client of a "crashed" process: one whose Node made p
// in a 4 s session that is then cut off for good, so that the session
// expires by itself on the server while its node is still there. cleanup
// closes what is left of it.
func crashed(t *testing.T, ns, p string) (old int64) {
	t.Helper()
	proxy := zktest.NewProxy(t, zkAddr)
	c, err := framework.Connect(testkit.Ctx(t), proxy.Addr(), framework.WithNamespace(ns),
		framework.WithSessionTimeout(4*time.Second),
		framework.WithRetryPolicy(retry.NTimes(3, 100*time.Millisecond)))
	if err != nil {
		t.Fatal(err)
	}
	n := node.New(c, p, []byte("before the crash"))
	start(t, n)
	old = c.SessionID()
	proxy.Cut()
	t.Cleanup(func() {
		_ = c.Close()
		_ = n.Close(context.Background())
	})
	return old
}

// Issue 33 item 14: a service restarted right after a crash (its previous
// session not expired yet, its ephemeral node still there) stopped with
// "node owned by another session". By default Start now waits for the
// dead session's node to go, saying so in a warning that names the owner
// and the expected wait; a Start whose ctx ends first names the owner and
// the options.
func TestRestartAfterCrashWaitsForTheDeadSession(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	old := crashed(t, ns, "/svc/i1")
	c := testkit.Connect(t, zkAddr, ns)
	core, logs := observer.New(zap.WarnLevel)

	short := node.New(c, "/svc/i1", []byte("restarted"), node.WithLogger(zap.New(core)))
	ctx, cancel := context.WithTimeout(testkit.Ctx(t), 500*time.Millisecond)
	err := short.Start(ctx)
	cancel()
	owner := fmt.Sprintf("0x%x", old)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, node.ErrOwnedByOtherSession) ||
		!strings.Contains(err.Error(), owner) || !strings.Contains(err.Error(), "TakeOver") || !strings.Contains(err.Error(), "FailIfOwned") {
		t.Fatalf("Start with a short ctx = %v; want the deadline, ErrOwnedByOtherSession, the owner %s and the options", err, owner)
	}
	closeNode(t, short)
	if st := stat(t, c, "/svc/i1"); st == nil || st.EphemeralOwner != old {
		t.Fatalf("the dead session's node %+v was touched", st)
	}

	n := node.New(c, "/svc/i1", []byte("restarted"), node.WithLogger(zap.New(core)))
	defer closeNode(t, n)
	start(t, n) // the old session expires within its 4 s
	st := stat(t, c, "/svc/i1")
	if st == nil || st.EphemeralOwner != c.SessionID() || data(t, c, "/svc/i1") != "restarted" {
		t.Fatalf("node %+v, want ours in session 0x%x", st, c.SessionID())
	}
	warned := logs.FilterMessageSnippet("waiting for it to go").FilterField(zap.String("owner", owner))
	if warned.Len() == 0 {
		t.Fatalf("no warning naming the owner %s: %v", owner, logs.All())
	}
	for _, e := range warned.All() {
		if e.Level != zap.WarnLevel || e.ContextMap()["expected_wait"] == nil {
			t.Fatalf("warning %+v: want Warn with the expected wait", e)
		}
	}
}

// TakeOver, Curator's way: a restarted process takes its old session's
// node over at once. A live Node of this package that loses its node this
// way waits for ours to go and never takes it back.
func TestTakeOver(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	c1 := testkit.Connect(t, zkAddr, ns)
	c2 := testkit.Connect(t, zkAddr, ns)
	first := node.New(c1, "/id", []byte("first"))
	defer closeNode(t, first)
	rec1 := record(t, first)
	start(t, first)
	second := node.New(c2, "/id", []byte("second"), node.TakeOver())
	start(t, second)
	if st := stat(t, c2, "/id"); st == nil || st.EphemeralOwner != c2.SessionID() || data(t, c2, "/id") != "second" {
		t.Fatalf("node %+v, want the second's", st)
	}
	_, i := rec1.await(t, 0, "first lost its node", recreating(node.ErrNodeDeleted))
	_, i = rec1.await(t, i, "first waiting on the second", recreating(node.ErrOwnedByOtherSession))
	if st := stat(t, c2, "/id"); st.EphemeralOwner != c2.SessionID() || first.Registered() {
		t.Fatalf("first took it back: %+v", st)
	}
	closeNode(t, second)
	rec1.await(t, i, "first registered again", registered)
	if st := stat(t, c1, "/id"); st == nil || st.EphemeralOwner != c1.SessionID() {
		t.Fatalf("node %+v, want the first's again", st)
	}
	for _, tc := range []struct {
		name string
		opts []node.Option
	}{
		{"with FailIfOwned", []node.Option{node.TakeOver(), node.FailIfOwned()}},
		{"persistent", []node.Option{node.TakeOver(), node.WithMode(framework.Persistent)}},
	} {
		n := node.New(c2, "/other", nil, tc.opts...)
		if err := n.Start(testkit.Ctx(t)); !errors.Is(err, node.ErrInvalidOption) {
			t.Fatalf("TakeOver %s: Start = %v, want ErrInvalidOption", tc.name, err)
		}
		closeNode(t, n)
	}
}
