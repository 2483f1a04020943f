package framework

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/internal/curatorjava"
)

func TestGetSetACL(t *testing.T) {
	ctx := testCtx(t)
	ns := newNamespace(t)
	c := connectNS(t, ns, WithAuth("digest", []byte("alice:secret")))
	other := connectNS(t, ns)
	if _, err := c.Create(ctx, "/n", nil); err != nil {
		t.Fatal(err)
	}
	acl, st, err := c.GetACL(ctx, "/n")
	if err != nil || st.Aversion != 0 || !sameACL(acl, zk.WorldACL(zk.PermAll)) {
		t.Fatalf("GetACL of a new node = %v, %+v, %v; want world:anyone, aversion 0", acl, st, err)
	}
	readOnly := zk.WorldACL(zk.PermRead)
	if _, err := c.SetACL(ctx, "/n", readOnly, 1); !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("SetACL at a wrong ACL version = %v, want zk.ErrBadVersion", err)
	}
	if st, err := c.SetACL(ctx, "/n", readOnly, 0); err != nil || st.Aversion != 1 || st.Version != 0 {
		t.Fatalf("SetACL = %+v, %v; want aversion 1, data version 0", st, err)
	}
	if _, err := other.Set(ctx, "/n", []byte("x"), -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("write to a read-only node = %v, want zk.ErrNoAuth", err)
	}
	// Only the creator: the digest of c's credentials.
	if _, err := c.SetACL(ctx, "/n", zk.AuthACL(zk.PermAll), -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("SetACL without the admin permission = %v, want zk.ErrNoAuth", err)
	}
	if _, err := c.Create(ctx, "/mine", nil, WithACL(zk.AuthACL(zk.PermAll))); err != nil {
		t.Fatal(err)
	}
	acl, _, err = c.GetACL(ctx, "/mine")
	if err != nil || len(acl) != 1 || acl[0].Scheme != "digest" || !strings.HasPrefix(acl[0].ID, "alice:") {
		t.Fatalf("creator ACL = %v, %v; want alice's digest", acl, err)
	}
	// Reading an ACL takes the read or admin permission (ZooKeeper 3.4.11+).
	if _, _, err := other.GetACL(ctx, "/mine"); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("GetACL by a stranger = %v, want zk.ErrNoAuth", err)
	}
	if _, err := other.SetACL(ctx, "/mine", zk.WorldACL(zk.PermAll), -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("SetACL by a stranger = %v, want zk.ErrNoAuth", err)
	}
	if _, err := c.SetACL(ctx, "/mine", []zk.ACL{{Perms: zk.PermAll, Scheme: "nosuch", ID: "x"}}, -1); !errors.Is(err, zk.ErrInvalidACL) {
		t.Fatalf("SetACL with an unknown scheme = %v, want zk.ErrInvalidACL", err)
	}
	if _, _, err := c.GetACL(ctx, "/missing"); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("GetACL of a missing node = %v, want zk.ErrNoNode", err)
	}
	if _, err := c.SetACL(ctx, "/missing", readOnly, -1); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("SetACL of a missing node = %v, want zk.ErrNoNode", err)
	}
	// The namespace applies: the node is under it on the server.
	direct := connect(t, server(t).ConnectString())
	if acl, _, err := direct.GetACL(ctx, "/"+ns+"/n"); err != nil || !sameACL(acl, readOnly) {
		t.Fatalf("the node outside the namespace: %v, %v", acl, err)
	}
	for _, p := range []string{"/n", "/mine"} {
		if err := c.Delete(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
}

func TestACLBadInput(t *testing.T) {
	ctx := testCtx(t)
	c := connectNS(t, newNamespace(t))
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"GetACL bad path", func() error { _, _, err := c.GetACL(ctx, "no/slash"); return err }(), ErrInvalidPath},
		{"SetACL bad path", func() error { _, err := c.SetACL(ctx, "/a/", zk.WorldACL(zk.PermAll), -1); return err }(), ErrInvalidPath},
		{"SetACL empty", func() error { _, err := c.SetACL(ctx, "/a", nil, -1); return err }(), ErrInvalidOption},
		{"SetACL version", func() error { _, err := c.SetACL(ctx, "/a", zk.WorldACL(zk.PermAll), -2); return err }(), ErrInvalidOption},
		{"nil client GetACL", func() error { _, _, err := (*Client)(nil).GetACL(ctx, "/a"); return err }(), ErrNilClient},
		{"nil client SetACL", func() error { _, err := (*Client)(nil).SetACL(ctx, "/a", nil, -1); return err }(), ErrNilClient},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
}

// A SetACL whose reply is lost was applied; its retry at the same version
// meets its own effect and succeeds. One made while cut off waits for the
// connection under the retry policy.
func TestSetACLAcrossLostReplyAndCut(t *testing.T) {
	ctx := testCtx(t)
	c, proxy, direct := lostReplyClient(t)
	if _, err := direct.Create(ctx, "/n", nil); err != nil {
		t.Fatal(err)
	}
	fired := proxy.LoseNextSetACLReply()
	readOnly := zk.WorldACL(zk.PermRead | zk.PermAdmin)
	st, err := c.SetACL(ctx, "/n", readOnly, 0)
	waitClosed(t, fired, testTimeout, "lost setACL reply")
	if err != nil || st.Aversion != 1 {
		t.Fatalf("SetACL after a lost reply = %+v, %v; want aversion 1", st, err)
	}
	// Another ACL at the same version is a real conflict.
	if _, err := c.SetACL(ctx, "/n", zk.WorldACL(zk.PermAll), 0); !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("SetACL of another ACL at a stale version = %v, want zk.ErrBadVersion", err)
	}

	states := record(c)
	defer states.cancel()
	proxy.Cut()
	states.expect(t, testTimeout, connstate.Suspended)
	done := make(chan error, 1)
	go func() {
		_, err := c.SetACL(ctx, "/n", zk.WorldACL(zk.PermAll), 1)
		done <- err
	}()
	proxy.Restore()
	if err := <-done; err != nil {
		t.Fatalf("SetACL across a cut: %v", err)
	}
	if acl, st, err := c.GetACL(ctx, "/n"); err != nil || st.Aversion != 2 || !sameACL(acl, zk.WorldACL(zk.PermAll)) {
		t.Fatalf("after the cut: %v, %+v, %v", acl, st, err)
	}
	if err := direct.Delete(ctx, "/n"); err != nil {
		t.Fatal(err)
	}
}

// Curator reads an ACL set by us and the reverse, versions included.
func TestACLInteropWithCurator(t *testing.T) {
	ctx := testCtx(t)
	ns := newNamespace(t)
	c := connectNS(t, ns)
	java := curatorjava.StartDriver(t, server(t).ConnectString())
	full := "/" + ns + "/n"
	if _, err := c.Create(ctx, "/n", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetACL(ctx, "/n", zk.WorldACL(zk.PermRead|zk.PermAdmin), 0); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("1 world:anyone:%d", zk.PermRead|zk.PermAdmin)
	if got := java.MustDo("fw-getacl " + full); got != want {
		t.Fatalf("Curator's getACL = %q, want %q", got, want)
	}
	if got := java.MustDo(fmt.Sprintf("fw-setacl %s 1 world:anyone:%d", full, zk.PermAll)); got != "2" {
		t.Fatalf("Curator's setACL = %q, want aversion 2", got)
	}
	if acl, st, err := c.GetACL(ctx, "/n"); err != nil || st.Aversion != 2 || !sameACL(acl, zk.WorldACL(zk.PermAll)) {
		t.Fatalf("GetACL after Curator's setACL = %v, %+v, %v", acl, st, err)
	}
	if err := c.Delete(ctx, "/n"); err != nil {
		t.Fatal(err)
	}
}
