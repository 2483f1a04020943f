package framework

import (
	"bytes"
	"errors"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/zktest"
)

// lostReplyClient connects through a fault proxy in a fresh namespace and
// returns the client, the proxy and a direct client on the same namespace
// that sees the server's truth.
func lostReplyClient(t *testing.T) (*Client, *zktest.Proxy, *Client) {
	t.Helper()
	ns := newNamespace(t)
	proxy := zktest.NewProxy(t, server(t).Addr())
	return connect(t, proxy.Addr(), WithNamespace(ns)), proxy, connectNS(t, ns)
}

// A create, set or delete whose reply is lost was applied; its retry meets
// its own effect. Without Idempotent that retry fails (this is what the
// fault does), with it the call succeeds.
func TestIdempotentWritesAfterLostReply(t *testing.T) {
	ctx := testCtx(t)
	c, proxy, direct := lostReplyClient(t)
	data := []byte("mine")
	// The namespace exists before a fault is armed, so that each faulty
	// create is the only request of its kind on the wire.
	if _, err := direct.Create(ctx, "/setup", nil); err != nil {
		t.Fatal(err)
	}

	t.Run("create without Idempotent fails on its own node", func(t *testing.T) {
		fired := proxy.LoseNextCreateReply()
		_, err := c.Create(ctx, "/plain", data)
		waitClosed(t, fired, testTimeout, "lost create reply")
		if !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("retried create = %v, want zk.ErrNodeExists (the fault did not bite)", err)
		}
	})
	t.Run("create", func(t *testing.T) {
		fired := proxy.LoseNextCreateReply()
		var st zk.Stat
		p, err := c.Create(ctx, "/n", data, Idempotent(), StoringStatIn(&st))
		waitClosed(t, fired, testTimeout, "lost create reply")
		if err != nil || p != "/n" {
			t.Fatalf("idempotent create after a lost reply = %q, %v", p, err)
		}
		got, real, err := direct.Get(ctx, "/n")
		if err != nil || !bytes.Equal(got, data) || real.Czxid != st.Czxid {
			t.Fatalf("node %q czxid %d (%v), Stat czxid %d", got, real.Czxid, err, st.Czxid)
		}
	})
	t.Run("compressed create", func(t *testing.T) {
		fired := proxy.LoseNextCreateReply()
		if _, err := c.Create(ctx, "/z", data, Idempotent(), Compressed()); err != nil {
			t.Fatalf("compressed idempotent create after a lost reply: %v", err)
		}
		waitClosed(t, fired, testTimeout, "lost create reply")
	})
	t.Run("set without Idempotent fails on its own version", func(t *testing.T) {
		fired := proxy.LoseNextSetReply()
		_, err := c.Set(ctx, "/plain", []byte("v1"), 0)
		waitClosed(t, fired, testTimeout, "lost set reply")
		if !errors.Is(err, zk.ErrBadVersion) {
			t.Fatalf("retried set = %v, want zk.ErrBadVersion (the fault did not bite)", err)
		}
	})
	t.Run("set", func(t *testing.T) {
		fired := proxy.LoseNextSetReply()
		st, err := c.Set(ctx, "/n", []byte("v1"), 0, Idempotent())
		waitClosed(t, fired, testTimeout, "lost set reply")
		if err != nil || st.Version != 1 {
			t.Fatalf("idempotent set after a lost reply = %+v, %v; want version 1", st, err)
		}
	})
	t.Run("delete", func(t *testing.T) {
		fired := proxy.LoseNextDeleteReply()
		if err := c.Delete(ctx, "/n", WithVersion(1), Idempotent()); err != nil {
			t.Fatalf("idempotent delete after a lost reply: %v", err)
		}
		waitClosed(t, fired, testTimeout, "lost delete reply")
		if st, err := direct.Exists(ctx, "/n"); st != nil || err != nil {
			t.Fatalf("deleted node: %+v, %v", st, err)
		}
	})
	t.Run("create-or-set", func(t *testing.T) {
		fired := proxy.LoseNextCreateReply()
		if _, err := c.Create(ctx, "/or", data, OrSetData(-1)); err != nil {
			t.Fatalf("create-or-set after a lost reply: %v", err)
		}
		waitClosed(t, fired, testTimeout, "lost create reply")
		// The retry found the node and set it again: version 1, same data.
		got, st, err := direct.Get(ctx, "/or")
		if err != nil || !bytes.Equal(got, data) || st.Version != 1 {
			t.Fatalf("node %q version %+v, %v", got, st, err)
		}
	})
	for _, p := range []string{"/plain", "/z", "/or", "/setup"} {
		if err := direct.Delete(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
}

// Idempotent is not a licence to overwrite: a node that holds other data,
// or another version, is still an error.
func TestIdempotentRefusesForeignEffects(t *testing.T) {
	ctx := testCtx(t)
	c := connectNS(t, newNamespace(t))
	if _, err := c.Create(ctx, "/n", []byte("theirs")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, "/n", []byte("mine"), Idempotent()); !errors.Is(err, zk.ErrNodeExists) {
		t.Fatalf("idempotent create over other data = %v, want zk.ErrNodeExists", err)
	}
	// Same data: a success, without a write.
	if p, err := c.Create(ctx, "/n", []byte("theirs"), Idempotent()); err != nil || p != "/n" {
		t.Fatalf("idempotent create over the same data = %q, %v", p, err)
	}
	if _, err := c.Set(ctx, "/n", []byte("x"), 0); err != nil { // version 1
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		data    string
		version int32
	}{
		{"other data, version one behind", "y", 0},
		{"same data, a version ahead", "x", 2},
	} {
		if _, err := c.Set(ctx, "/n", []byte(tc.data), tc.version, Idempotent()); !errors.Is(err, zk.ErrBadVersion) {
			t.Fatalf("%s: idempotent set = %v, want zk.ErrBadVersion", tc.name, err)
		}
	}
	if st, err := c.Set(ctx, "/n", []byte("x"), 0, Idempotent()); err != nil || st.Version != 1 {
		t.Fatalf("idempotent set already applied = %+v, %v; want version 1", st, err)
	}
	if _, err := c.Set(ctx, "/missing", []byte("x"), 0, Idempotent()); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("idempotent set of a missing node = %v, want zk.ErrNoNode", err)
	}
	if err := c.Delete(ctx, "/missing", Idempotent()); err != nil {
		t.Fatalf("idempotent delete of a missing node: %v", err)
	}
	if err := c.Delete(ctx, "/n", WithVersion(0), Idempotent()); !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("idempotent delete of another version = %v, want zk.ErrBadVersion", err)
	}
	if err := c.Delete(ctx, "/n"); err != nil {
		t.Fatal(err)
	}
}

// Curator 5's create().orSetData(): create when missing, set when there.
func TestCreateOrSetData(t *testing.T) {
	ctx := testCtx(t)
	c := connectNS(t, newNamespace(t))
	var st zk.Stat
	if p, err := c.Create(ctx, "/a/b", []byte("1"), OrSetData(-1), CreatingParents(), StoringStatIn(&st)); err != nil || p != "/a/b" || st.Version != 0 {
		t.Fatalf("create-or-set of a missing node = %q, %+v, %v", p, st, err)
	}
	if p, err := c.Create(ctx, "/a/b", []byte("2"), OrSetData(-1), StoringStatIn(&st)); err != nil || p != "/a/b" || st.Version != 1 {
		t.Fatalf("create-or-set of an existing node = %q, %+v, %v", p, st, err)
	}
	if _, err := c.Create(ctx, "/a/b", []byte("3"), OrSetData(0)); !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("create-or-set at a stale version = %v, want zk.ErrBadVersion", err)
	}
	if _, err := c.Create(ctx, "/a/b", []byte("3"), OrSetData(1), Compressed()); err != nil {
		t.Fatal(err)
	}
	if got, _, err := c.Get(ctx, "/a/b", Decompressed()); err != nil || string(got) != "3" {
		t.Fatalf("compressed create-or-set stored %q, %v", got, err)
	}
	if _, err := c.Create(ctx, "/a/b", nil, OrSetData(-2)); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("OrSetData(-2) = %v, want ErrInvalidOption", err)
	}
	if err := c.Delete(ctx, "/a", DeletingChildren()); err != nil {
		t.Fatal(err)
	}
}
