package node_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/node"
	"github.com/gocurator/curator/zktest"
)

// CURATOR-190: a protected sequential node that is lost is made again
// under its first name, so there is one node, never two; and a first
// create whose reply is lost is found by its protected name, not made
// twice.
func TestProtectedSequentialKeepsOneNode(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns)
	admin := testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
	n := node.New(c, "/svc/inst-", []byte("x"), node.WithMode(framework.EphemeralSequential), node.Protected())
	defer closeNode(t, n)
	rec := record(t, n)
	fired := proxy.LoseNextCreateReply()
	start(t, n)
	testkit.WaitClosed(t, fired, "the lost reply")
	name := n.Path()
	if !strings.HasPrefix(name, "/svc/_c_") || !strings.Contains(name, "-inst-") || !framework.IsProtected(strings.TrimPrefix(name, "/svc/")) {
		t.Fatalf("path %q, want /svc/_c_<uuid>-inst-<seq>", name)
	}
	if kids := testkit.Children(t, admin, "/svc"); len(kids) != 1 {
		t.Fatalf("children after a lost reply %q, want one", kids)
	}
	first := n.Status().Czxid
	if err := admin.Delete(ctx, name); err != nil {
		t.Fatal(err)
	}
	_, i := rec.await(t, 0, "Recreating", recreating(node.ErrNodeDeleted))
	ev, _ := rec.await(t, i, "registered again", registered)
	if ev.Czxid == first || ev.Path != name || n.Path() != name {
		t.Fatalf("made again as %+v, want path %s", ev, name)
	}
	if kids := testkit.Children(t, admin, "/svc"); len(kids) != 1 || "/svc/"+kids[0] != name {
		t.Fatalf("children %q, want just %s", kids, name)
	}
}

// An unprotected sequential node gets its number once and keeps it.
func TestSequentialKeepsItsName(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	admin := testkit.Connect(t, zkAddr, ns)
	n := node.New(c, "/q/item-", nil, node.WithMode(framework.PersistentSequential))
	rec := record(t, n)
	start(t, n)
	name := n.Path()
	if name != "/q/item-0000000000" {
		t.Fatalf("path %q", name)
	}
	if err := admin.Delete(testkit.Ctx(t), name); err != nil {
		t.Fatal(err)
	}
	_, i := rec.await(t, 0, "Recreating", recreating(node.ErrNodeDeleted))
	rec.await(t, i, "registered again", registered)
	if kids := testkit.Children(t, admin, "/q"); len(kids) != 1 || kids[0] != "item-0000000000" {
		t.Fatalf("children %q", kids)
	}
	closeNode(t, n)
	if kids := testkit.Children(t, admin, "/q"); len(kids) != 0 {
		t.Fatalf("children after Close %q", kids)
	}
}

// A persistent node outlives its session without being made again; one
// found at the path is adopted and given our data, as Curator does; Close
// deletes it.
func TestPersistentNode(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	admin := testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
	if _, err := admin.Create(ctx, "/config", []byte("stale"), framework.WithMode(framework.Persistent)); err != nil {
		t.Fatal(err)
	}
	n := node.New(c, "/config", []byte("fresh"), node.WithMode(framework.Persistent))
	start(t, n)
	if got := data(t, admin, "/config"); got != "fresh" {
		t.Fatalf("data %q, want ours", got)
	}
	if st := stat(t, admin, "/config"); st.EphemeralOwner != 0 {
		t.Fatalf("owner 0x%x", st.EphemeralOwner)
	}
	closeNode(t, n)
	if st := stat(t, admin, "/config"); st != nil {
		t.Fatalf("left after Close: %+v", st)
	}
}

// CURATOR-297: Close racing with Start leaves no node and no goroutine,
// whichever wins.
func TestStartCloseRaceLeavesNothing(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	admin := testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
	const rounds = 20
	var wg sync.WaitGroup
	for i := range rounds {
		n := node.New(c, "/race/n", nil)
		wg.Add(2)
		errs := make(chan error, 1)
		go func() {
			defer wg.Done()
			errs <- n.Start(ctx)
		}()
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				<-errs // after Start
				errs <- nil
			}
			if err := n.Close(ctx); err != nil {
				t.Errorf("close: %v", err)
			}
		}()
		wg.Wait()
		if err := <-errs; err != nil && !errors.Is(err, node.ErrClosed) {
			t.Fatalf("round %d: Start = %v", i, err)
		}
		if st := stat(t, admin, "/race/n"); st != nil {
			t.Fatalf("round %d: node left: %+v", i, st)
		}
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, c)
}

// A Start cancelled while the path is held by another session (WaitForOwner)
// returns ctx's error and leaves nothing running, no watch.
func TestStartCancelledLeavesNothing(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	c1 := testkit.Connect(t, zkAddr, ns)
	c2 := testkit.Connect(t, zkAddr, ns)
	holder := node.New(c1, "/p", nil)
	defer closeNode(t, holder)
	start(t, holder)
	n := node.New(c2, "/p", nil, node.WaitForOwner())
	ctx, cancel := context.WithCancel(testkit.Ctx(t))
	done := make(chan error, 1)
	go func() { done <- n.Start(ctx) }()
	testkit.AwaitWatch(t, zkAddr, c2, "/p")
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Start = %v, want Canceled", err)
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, c2)
	if st := stat(t, c2, "/p"); st == nil || st.EphemeralOwner != c1.SessionID() {
		t.Fatalf("holder's node %+v", st)
	}
	closeNode(t, n)
}

// Without parent creation a missing parent is Start's error (zk.ErrNoNode);
// a parent the client may not write to is zk.ErrNoAuth: typed errors, not
// a silent flag, and nothing left.
func TestParentErrors(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	admin := testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
	n := node.New(c, "/missing/p", nil, node.NoParentCreation())
	if err := n.Start(ctx); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("Start without a parent = %v, want zk.ErrNoNode", err)
	}
	closeNode(t, n)
	readOnly := zk.WorldACL(zk.PermRead)
	if _, err := admin.Create(ctx, "/locked", nil, framework.WithMode(framework.Persistent), framework.WithACL(readOnly)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Delete(context.Background(), "/locked") })
	n = node.New(c, "/locked/p", nil)
	if err := n.Start(ctx); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("Start under a read-only parent = %v, want zk.ErrNoAuth", err)
	}
	if n.Status().State != node.Idle || n.Registered() {
		t.Fatalf("after a failed Start: %+v", n.Status())
	}
	closeNode(t, n)
	testkit.AwaitWatchCount(t, zkAddr, 0, c)
}
