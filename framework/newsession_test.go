package framework

import (
	"errors"
	"testing"

	"github.com/go-zookeeper/zk"
)

// A new session is a client like the first (servers, chroot, the view's
// namespace, credentials) with a session of its own: it reads what only
// the first's credentials may read, under the same names, and closing it
// leaves the first alone.
func TestNewSession(t *testing.T) {
	ctx := testCtx(t)
	ns := newNamespace(t)
	c := connectNS(t, ns, WithAuth("digest", []byte("user:secret")))
	acl := zk.DigestACL(zk.PermAll, "user", "secret")
	if _, err := c.Create(ctx, "/private", []byte("mine"), WithACL(acl)); err != nil {
		t.Fatal(err)
	}
	view, err := c.WithNamespace(ns + "/sub")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := view.Create(ctx, "/n", []byte("in the view"), CreatingParents()); err != nil {
		t.Fatal(err)
	}

	s, err := c.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.SessionID() == c.SessionID() || s.SessionID() == 0 {
		t.Fatalf("new session %x, first %x: want another session", s.SessionID(), c.SessionID())
	}
	if data, _, err := s.Get(ctx, "/private"); err != nil || string(data) != "mine" {
		t.Fatalf("the new session reads the first's private node: %q, %v", data, err)
	}
	vs, err := view.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if data, _, err := vs.Get(ctx, "/n"); err != nil || string(data) != "in the view" {
		t.Fatalf("a view's new session keeps the view's namespace: %q, %v", data, err)
	}
	if vs.IsView() {
		t.Fatal("a view's new session is a view: it owns its session and must be closable")
	}
	for _, x := range []*Client{s, vs} {
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := c.Get(ctx, "/private"); err != nil {
		t.Fatalf("the first client after the new ones closed: %v", err)
	}
	if err := view.Delete(ctx, "/n"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/private", "/sub"} {
		if err := c.Delete(ctx, p); err != nil {
			t.Fatal(err)
		}
	}

	closed := connectNS(t, ns)
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := closed.NewSession(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("NewSession of a closed client = %v, want ErrClosed", err)
	}
	var nilClient *Client
	if _, err := nilClient.NewSession(ctx); !errors.Is(err, ErrNilClient) {
		t.Fatalf("NewSession of a nil client = %v, want ErrNilClient", err)
	}
}
