package framework

import (
	"testing"

	"github.com/go-zookeeper/zk"
)

// StoringStatIn reads czxid and owner off the create's reply: the values
// match the server's Stat, and no exists request was needed (a Stat read
// with exists would carry the creation time).
func TestStoringStatInFromTheReply(t *testing.T) {
	c := connect(t, server(t).Addr(), WithNamespace(newNamespace(t)))
	ctx := testCtx(t)
	tests := []struct {
		name string
		path string
		opts []CreateOption
	}{
		{"persistent", "/p", []CreateOption{WithMode(Persistent)}},
		{"ephemeral", "/e", []CreateOption{WithMode(Ephemeral)}},
		{"ephemeral sequential", "/s-", []CreateOption{WithMode(EphemeralSequential)}},
		{"protected ephemeral sequential with parents", "/locks/a/lock-",
			[]CreateOption{WithMode(EphemeralSequential), Protected(), CreatingParentContainers()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var st zk.Stat
			p, err := c.Create(ctx, tt.path, nil, append(tt.opts, StoringStatIn(&st))...)
			if err != nil {
				t.Fatal(err)
			}
			real, err := c.Exists(ctx, p)
			if err != nil || real == nil {
				t.Fatalf("exists %s: %v %v", p, real, err)
			}
			if st.Czxid != real.Czxid || st.Mzxid != real.Mzxid || st.EphemeralOwner != real.EphemeralOwner {
				t.Fatalf("stored %+v, server %+v", st, *real)
			}
			if st.Ctime != 0 {
				t.Fatalf("the Stat was read with a request, not off the reply: %+v", st)
			}
			left := c.h.wire.Outstanding()
			if left != 0 {
				t.Fatalf("wire bookkeeping left behind: %d entries", left)
			}
		})
	}
	if _, err := c.Create(ctx, "/x", nil, StoringStatIn(nil)); err == nil {
		t.Fatal("StoringStatIn(nil) accepted")
	}
}
