package framework

import (
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/internal/zkconn"
)

// When the wire has no reply to read (a frame it did not understand), a
// create asked for its Stat reads it with a request instead, and gets the
// same answer: czxid and owner of the node made.
func TestFallbackWithoutWireReply(t *testing.T) {
	c := connect(t, server(t).ConnectString(), WithNamespace(newNamespace(t)))
	ctx := testCtx(t)
	for _, ignored := range []bool{false, true} {
		zkconn.IgnoreCreateReplies(ignored)
		var st zk.Stat
		var kids []string
		p, err := c.Create(ctx, "/locks/lock-", nil, WithMode(EphemeralSequential), Protected(),
			CreatingParents(), StoringStatIn(&st), ListingParent(&kids))
		zkconn.IgnoreCreateReplies(false)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Exists(ctx, p)
		if err != nil || got == nil {
			t.Fatalf("exists %s: %v, %v", p, got, err)
		}
		if st.Czxid != got.Czxid || st.EphemeralOwner != c.SessionID() {
			t.Fatalf("ignored=%v: stat czxid %d owner %#x, the node's %d %#x", ignored, st.Czxid, st.EphemeralOwner, got.Czxid, c.SessionID())
		}
		if len(kids) == 0 {
			t.Fatalf("ignored=%v: no listing", ignored)
		}
		if err := c.Delete(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
}
