package node_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/node"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/zktest"
)

// tooLarge is more data than a server's default jute.maxbuffer takes.
var tooLarge = []byte(strings.Repeat("x", 2<<20))

// Issue 33 item 4: a SetData the client refuses (framework.ErrDataTooLarge)
// must not replace the last accepted data. It did: the refused value was
// kept for the next create, which was refused too, so after a delete the
// node was never made again. Here it comes back with the last accepted
// data, after a delete by another client.
func TestRefusedSetDataKeepsTheNodeAfterDelete(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	admin := testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
	n := node.New(c, "/p", []byte("v1"))
	defer closeNode(t, n)
	rec := record(t, n)
	start(t, n)
	if err := n.SetData(ctx, []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if err := n.SetData(ctx, tooLarge); !errors.Is(err, framework.ErrDataTooLarge) {
		t.Fatalf("SetData of 2 MiB = %v, want ErrDataTooLarge", err)
	}
	if got := string(n.Data()); got != "v2" {
		t.Fatalf("Data after a refused SetData: %d bytes, want the last accepted v2", len(got))
	}
	first := n.Status().Czxid
	if err := admin.Delete(ctx, "/p"); err != nil {
		t.Fatal(err)
	}
	_, i := rec.await(t, 0, "Recreating(ErrNodeDeleted)", recreating(node.ErrNodeDeleted))
	ev, _ := rec.await(t, i, "registered again", registered)
	if ev.Czxid == first {
		t.Fatalf("registered the deleted incarnation: %+v", ev)
	}
	if got := data(t, admin, "/p"); got != "v2" {
		t.Fatalf("made again with %d bytes, want v2", len(got))
	}
}

// The same after the session expires: the node is made again in the new
// session with the last accepted data.
func TestRefusedSetDataKeepsTheNodeAfterExpiry(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns,
		framework.WithSessionTimeout(4*time.Second), framework.WithSessionExpiryPercent(50),
		framework.WithRetryPolicy(retry.NTimes(100, 100*time.Millisecond)))
	admin := testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
	n := node.New(c, "/p", []byte("v1"))
	defer closeNode(t, n)
	rec := record(t, n)
	start(t, n)
	if err := n.SetData(ctx, tooLarge); !errors.Is(err, framework.ErrDataTooLarge) {
		t.Fatalf("SetData of 2 MiB = %v, want ErrDataTooLarge", err)
	}
	old := c.SessionID()
	proxy.Cut()
	_, i := rec.await(t, 0, "Recreating(ErrSessionLost)", recreating(node.ErrSessionLost))
	proxy.Restore()
	testkit.WaitState(t, c, connstate.Reconnected)
	ev, _ := rec.await(t, i, "registered in the new session", registered)
	if ev.Session == old || ev.Session != c.SessionID() {
		t.Fatalf("registered %+v; old session 0x%x, live 0x%x", ev, old, c.SessionID())
	}
	if got := data(t, admin, "/p"); got != "v1" {
		t.Fatalf("made again with %d bytes, want v1", len(got))
	}
}

// A value set while no node is registered (before Start here) cannot be
// checked until it is created; the create refuses it, and the node is made
// with the last accepted data, with a warning, rather than never.
func TestRefusedDataBeforeStartFallsBack(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	core, logs := observer.New(zap.WarnLevel)
	n := node.New(c, "/p", []byte("v1"), node.WithLogger(zap.New(core)))
	defer closeNode(t, n)
	if err := n.SetData(testkit.Ctx(t), tooLarge); err != nil {
		t.Fatalf("SetData before Start: %v", err)
	}
	start(t, n)
	if got := data(t, c, "/p"); got != "v1" {
		t.Fatalf("made with %d bytes, want v1", len(got))
	}
	if got := string(n.Data()); got != "v1" {
		t.Fatalf("Data %d bytes, want v1", len(got))
	}
	if logs.FilterMessageSnippet("refused").Len() == 0 {
		t.Fatalf("no warning of the refused data: %v", logs.All())
	}
}
