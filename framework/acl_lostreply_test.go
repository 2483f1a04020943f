package framework

import (
	"errors"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/zktest"
)

// A SetACL with a version whose reply is lost was applied; its retry meets
// zk.ErrBadVersion and must recognise its own effect by what the server
// stores, not by what was sent: the server rewrites an "auth" entry to the
// client's authenticated ids and drops repeated entries. Comparing the
// list as sent called the applied change a conflict (issue 33, item 10).
func TestSetACLLostReplyComparesStoredACL(t *testing.T) {
	const creds = "alice:secret"
	alice := zk.DigestACL(zk.PermAll, "alice", "secret")
	read := zk.WorldACL(zk.PermRead)
	tests := []struct {
		name string
		acl  []zk.ACL
	}{
		{"creator", zk.AuthACL(zk.PermAll)},
		{"creator and world read", append(zk.AuthACL(zk.PermAll), read...)},
		{"repeated entry", []zk.ACL{read[0], alice[0], read[0]}},
		{"creator and its own digest", append(zk.AuthACL(zk.PermAll), alice...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			ns := newNamespace(t)
			proxy := zktest.NewProxy(t, server(t).Addr())
			c := connect(t, proxy.Addr(), WithNamespace(ns), WithAuth("digest", []byte(creds)))
			direct := connectNS(t, ns, WithAuth("digest", []byte(creds)))
			if _, err := direct.Create(ctx, "/n", nil); err != nil {
				t.Fatal(err)
			}
			fired := proxy.LoseNextSetACLReply()
			st, err := c.SetACL(ctx, "/n", tt.acl, 0)
			waitClosed(t, fired, testTimeout, "lost setACL reply")
			// The server's truth: the change was applied, once.
			got, cur, gerr := direct.GetACL(ctx, "/n")
			if gerr != nil || cur.Aversion != 1 {
				t.Fatalf("server after the lost reply: %v, %+v, %v; want aversion 1", got, cur, gerr)
			}
			if err != nil || st == nil || st.Aversion != 1 {
				t.Fatalf("SetACL(%v) after a lost reply = %+v, %v; want aversion 1 (server holds %v)", tt.acl, st, err, got)
			}
			// A different ACL at the stale version is still a conflict.
			if _, err := c.SetACL(ctx, "/n", zk.WorldACL(zk.PermAll), 0); !errors.Is(err, zk.ErrBadVersion) {
				t.Fatalf("SetACL of another ACL at a stale version = %v, want zk.ErrBadVersion", err)
			}
			if err := direct.Delete(ctx, "/n"); err != nil {
				t.Fatal(err)
			}
		})
	}
}
