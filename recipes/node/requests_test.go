package node_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/node"
	"github.com/gocurator/curator/zktest"
)

// received returns how many requests the server has read from session
// sid (testkit.Received).
func received(t *testing.T, sid int64) int { return testkit.Received(t, zkAddr, sid) }

// serverWatches returns the server's count of watches, children watches
// included (mntr's zk_watch_count; wchc lists data watches only).
func serverWatches(t *testing.T) int {
	t.Helper()
	out, err := testkit.FourLetterWord(zkAddr, "mntr")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "zk_watch_count"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatalf("mntr: %q", line)
			}
			return n
		}
	}
	t.Fatalf("no zk_watch_count in mntr: %s", out)
	return 0
}

// Issue 35: the requests of Start, SetData and Close, counted by the
// server. Start sends 2 in one round trip: the create, and beside it a
// read that sets a one-shot data watch on the node (ZooKeeper answers a
// session's requests in order, so the read finds the node the create
// made; should it go first, it finds nothing and is sent again after the
// create: 3, which the least of the rounds leaves out). SetData sends 2:
// the versioned set, and the read that watches the node again after the
// set fired the watch. Close sends 1: the delete, at our version, without
// reading the owner first (see removeKnown), and it fires the watch, so
// nothing is left to give back. The first version sent 2 for Start (an
// addWatch, then the create, in two round trips), 1 for SetData and 3 for
// Close (an exists, the delete, a removeWatches). Curator's PersistentNode
// sends 1 and 1 (and watches with an exists when it has not
// created yet). Counts are the least of several rounds, so a keepalive
// ping cannot fail the test; a request added back to any of them does.
// Not parallel: the server's count of watches must come back to where it
// was, and only mntr counts all of them, for the whole server.
func TestRequestsPerOperation(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		opts                     []node.Option
		start, set, closed, pair int
	}{
		{"ephemeral", nil, 2, 2, 1, 3},
		{"persistent", []node.Option{node.WithMode(framework.Persistent)}, 2, 2, 1, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testkit.Connect(t, zkAddr, testkit.Unique(t))
			ctx := testkit.Ctx(t)
			if _, err := c.Create(ctx, "/g", nil, framework.CreatingParentContainers()); err != nil {
				t.Fatal(err)
			}
			watches := serverWatches(t)
			const rounds = 6
			starts, sets, closes, pairs := 1<<30, 1<<30, 1<<30, 1<<30
			for i := range rounds {
				sid := c.SessionID()
				path := "/g/n" + strconv.Itoa(i)
				n := node.New(c, path, []byte("a"), tc.opts...)
				n0 := received(t, sid)
				start(t, n)
				n1 := received(t, sid)
				if err := n.SetData(ctx, []byte("b")); err != nil {
					t.Fatal(err)
				}
				// The watch, fired by our SetData, is set again after
				// SetData returns.
				testkit.Eventually(t, "the watch set again", func() bool { return received(t, sid) >= n1+tc.set })
				n2 := received(t, sid)
				closeNode(t, n)
				n3 := received(t, sid)
				n = node.New(c, path, []byte("a"), tc.opts...)
				start(t, n)
				closeNode(t, n)
				n4 := received(t, sid)
				starts, sets, closes, pairs = min(starts, n1-n0), min(sets, n2-n1), min(closes, n3-n2), min(pairs, n4-n3)
				if st := stat(t, c, path); st != nil {
					t.Fatalf("node left after Close: %+v", st)
				}
			}
			t.Logf("requests: Start %d, SetData %d, Close %d, Start and Close at once %d", starts, sets, closes, pairs)
			if starts != tc.start || sets != tc.set || closes != tc.closed || pairs != tc.pair {
				t.Fatalf("Start sent %d requests, SetData %d, Close %d, Start and Close %d; want %d, %d, %d, %d",
					starts, sets, closes, pairs, tc.start, tc.set, tc.closed, tc.pair)
			}
			testkit.Eventually(t, "the server's watches back to where they were", func() bool {
				return serverWatches(t) == watches
			})
		})
	}
}

// Close deletes with one request, at the version our node had when last
// seen, where it deleted after an exists (issue 35): see removeKnown. The cases where that
// version is not enough: the node written by another session (the delete
// is refused and the node looked at, then deleted: it is ours), and the
// node replaced or deleted while the client was cut off. The server sets
// the node's one-shot watch again at the reconnection and fires it for a
// change made meanwhile: a deleted node is made again, a node replaced by
// another session's (at the same version, 0) is waited out and never
// deleted, even by a Close sent the moment the connection is back (a
// reconnection since the watch was set makes Close look at the owner).
func TestCloseDeletesOnlyOurs(t *testing.T) {
	t.Parallel()
	for _, tc := range []string{"written by another", "deleted during a cut", "replaced during a cut", "replaced, closed at once"} {
		t.Run(tc, func(t *testing.T) {
			t.Parallel()
			ns := testkit.Unique(t)
			proxy := zktest.NewProxy(t, zkAddr)
			c := testkit.Connect(t, proxy.Addr(), ns)
			admin := testkit.Connect(t, zkAddr, ns)
			ctx := testkit.Ctx(t)
			n := node.New(c, "/p", []byte("ours"))
			rec := record(t, n)
			start(t, n)
			old := stat(t, admin, "/p")
			if tc == "written by another" {
				if _, err := admin.Set(ctx, "/p", []byte("theirs"), -1); err != nil {
					t.Fatal(err)
				}
				closeNode(t, n)
				if st := stat(t, admin, "/p"); st != nil {
					t.Fatalf("our node, written by another, left: %+v", st)
				}
				return
			}
			proxy.Cut()
			testkit.WaitState(t, c, connstate.Suspended)
			if err := admin.Delete(ctx, "/p"); err != nil {
				t.Fatal(err)
			}
			if tc != "deleted during a cut" {
				if _, err := admin.Create(ctx, "/p", []byte("theirs"), framework.WithMode(framework.Ephemeral)); err != nil {
					t.Fatal(err)
				}
			}
			proxy.Restore()
			switch tc {
			case "deleted during a cut":
				ev, _ := rec.await(t, 0, "Registered again", func(ev node.Event) bool {
					return registered(ev) && ev.Czxid != old.Czxid
				})
				if st := stat(t, admin, "/p"); st == nil || st.Czxid != ev.Czxid || st.EphemeralOwner != c.SessionID() {
					t.Fatalf("node %+v after the reconnection, want ours (%+v)", st, ev)
				}
				closeNode(t, n)
				if st := stat(t, admin, "/p"); st != nil {
					t.Fatalf("node left after Close: %+v", st)
				}
				return
			case "replaced during a cut":
				rec.await(t, 0, "Recreating, owned by another", func(ev node.Event) bool {
					return ev.State == node.Recreating && errors.Is(ev.Reason, node.ErrOwnedByOtherSession)
				})
			default:
				testkit.WaitState(t, c, connstate.Reconnected)
			}
			closeNode(t, n)
			if st := stat(t, admin, "/p"); st == nil || st.EphemeralOwner != admin.SessionID() || data(t, admin, "/p") != "theirs" {
				t.Fatalf("their node %+v after our Close", st)
			}
		})
	}
}
