package framework

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/zktest"
)

// Issue 33 item 5: one-shot watches on a node the client may not read.
// exists needs no permission but getChildren and getData need READ, so a
// one-shot Watcher could set its exists watch and then wait for ever for
// the children watch it could not set. These tests give Watch a deadline
// well short of the test's, so that a hang fails rather than blocks.

// unreadableTimeout bounds a Watch that must fail or return at once.
const unreadableTimeout = 10 * time.Second

// ownerAndStranger returns a client that owns what it creates (digest
// ACL, all permissions for it alone) and a client of the same namespace
// with no permission on those nodes.
func ownerAndStranger(t *testing.T) (owner, stranger *Client) {
	t.Helper()
	ns := newNamespace(t)
	owner = connectNS(t, ns, WithAuth("digest", []byte("owner:pw")))
	stranger = connectNS(t, ns)
	return owner, stranger
}

var ownerOnly = zk.DigestACL(zk.PermAll, "owner", "pw")

// A one-shot Watcher of a root the client may not read fails at once with
// zk.ErrNoAuth, and leaves no watch behind. (A persistent one is set: the
// server's addWatch asks no permission; from 3.8.4 on the server holds
// back its events of nodes the client may not read.)
func TestWatchOneShotUnreadableRootFails(t *testing.T) {
	owner, stranger := ownerAndStranger(t)
	ctx := testCtx(t)
	if _, err := owner.Create(ctx, "/secret", nil, WithACL(ownerOnly)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts []WatchOption
	}{
		{"one-shot", []WatchOption{OneShot()}},
		{"one-shot recursive", []WatchOption{OneShot(), Recursive()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wctx, cancel := context.WithTimeout(ctx, unreadableTimeout)
			defer cancel()
			w, err := stranger.Watch(wctx, "/secret", tc.opts...)
			if err == nil {
				w.Close()
				t.Fatal("Watch of an unreadable node succeeded")
			}
			if !errors.Is(err, zk.ErrNoAuth) {
				t.Fatalf("Watch of an unreadable node = %v, want zk.ErrNoAuth", err)
			}
			awaitServerWatches(t, server(t).Addr(), stranger)
		})
	}
}

// A recursive one-shot Watcher whose tree holds a node the client may not
// read returns, follows the readable nodes, and reports the unreadable
// node's deletion (seen in its parent's listing: the server withholds the
// events of a node from a client that may not read it).
func TestWatchOneShotUnreadableChild(t *testing.T) {
	owner, stranger := ownerAndStranger(t)
	ctx := testCtx(t)
	if _, err := owner.Create(ctx, "/t/open", nil, CreatingParents()); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Create(ctx, "/t/secret", nil, WithACL(ownerOnly)); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Create(ctx, "/t/secret/below", nil); err != nil {
		t.Fatal(err)
	}
	w, err := stranger.Watch(ctx, "/t", OneShot(), Recursive())
	if err != nil {
		t.Fatalf("Watch of a tree with an unreadable node = %v", err)
	}
	defer w.Close()
	if _, err := owner.Set(ctx, "/t/open", []byte("1"), -1); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, w, WatchDataChanged, "/t/open")
	if err := owner.Delete(ctx, "/t/secret", DeletingChildren()); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, w, WatchDeleted, "/t/secret")
	if _, err := owner.Create(ctx, "/t/after", nil); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, w, WatchCreated, "/t/after")
}

// Re-arming after an event: an unreadable node created in a watched tree
// is reported created, and the Watcher goes on, where it waited for the
// node's permission before, with no watch left on the tree.
func TestWatchOneShotTreeRearmOnUnreadableNode(t *testing.T) {
	owner, stranger := ownerAndStranger(t)
	ctx := testCtx(t)
	if _, err := owner.Create(ctx, "/t", nil); err != nil {
		t.Fatal(err)
	}
	w, err := stranger.Watch(ctx, "/t", OneShot(), Recursive())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := owner.Create(ctx, "/t/secret", nil, WithACL(ownerOnly)); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, w, WatchCreated, "/t/secret")
	if _, err := owner.Create(ctx, "/t/z", nil); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, w, WatchCreated, "/t/z")
}

// expiringStranger is ownerAndStranger with the stranger behind a proxy,
// so that its session can be expired: expire cuts it off silently until
// the server has expired the session (its ephemeral marker is gone, as the
// owner sees), then lets it reconnect, in a new session. The server's
// expiry, not only the client's: a session the server still holds would
// be resumed by the connection the client retired, which sets
// go-zookeeper's one-shot watches again unguarded (go-zookeeper#35).
func expiringStranger(t *testing.T) (owner, stranger *Client, proxy *zktest.Proxy, expire func()) {
	t.Helper()
	srv := server(t)
	ns := newNamespace(t)
	owner = connectNS(t, ns, WithAuth("digest", []byte("owner:pw")))
	proxy = zktest.NewProxy(t, srv.Addr())
	stranger = connect(t, proxy.Addr(), WithNamespace(ns), WithSessionTimeout(4*time.Second))
	expire = func() {
		t.Helper()
		ctx := testCtx(t)
		states := record(stranger)
		defer states.cancel()
		first := stranger.SessionID()
		if _, err := stranger.Create(ctx, "/marker", nil, WithMode(Ephemeral)); err != nil {
			t.Fatal(err)
		}
		proxy.BlackHole()
		states.expect(t, testTimeout, connstate.Suspended, connstate.Lost)
		eventually(t, testTimeout, "the server expires the session", func() (bool, error) {
			st, err := owner.Exists(ctx, "/marker")
			return err == nil && st == nil, err
		})
		proxy.Restore()
		states.expect(t, testTimeout, connstate.Reconnected)
		if stranger.SessionID() == first {
			t.Fatal("same session after expiry")
		}
	}
	return owner, stranger, proxy, expire
}

// Re-arming after a new session: a node Watcher whose node became
// unreadable sets its exists watch again (it waited for a state change
// before, having none), so it reports the node's next change once the
// node is readable again.
func TestWatchOneShotRearmAfterExpiryOnUnreadableNode(t *testing.T) {
	owner, stranger, _, expire := expiringStranger(t)
	ctx := testCtx(t)
	if _, err := owner.Create(ctx, "/n", nil); err != nil {
		t.Fatal(err)
	}
	w, err := stranger.Watch(ctx, "/n", OneShot())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := owner.SetACL(ctx, "/n", ownerOnly, -1); err != nil {
		t.Fatal(err)
	}
	expire()
	collect(t, w, func(ev WatchEvent) bool { return ev.Type == WatchResync && ev.NewSession })
	awaitServerWatches(t, server(t).Addr(), stranger, stranger.full("/n"))
	if _, err := owner.SetACL(ctx, "/n", zk.WorldACL(zk.PermAll), -1); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Set(ctx, "/n", []byte("1"), -1); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, w, WatchDataChanged, "/n")
}

// Re-arming after a new session in the recursive fallback: the tree is
// loaded again although one of its nodes became unreadable, and later
// changes are reported.
func TestWatchOneShotTreeRearmAfterExpiry(t *testing.T) {
	owner, stranger, _, expire := expiringStranger(t)
	ctx := testCtx(t)
	if _, err := owner.Create(ctx, "/t/k", nil, CreatingParents()); err != nil {
		t.Fatal(err)
	}
	w, err := stranger.Watch(ctx, "/t", OneShot(), Recursive())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := owner.SetACL(ctx, "/t/k", ownerOnly, -1); err != nil {
		t.Fatal(err)
	}
	expire()
	collect(t, w, func(ev WatchEvent) bool { return ev.Type == WatchResync && ev.NewSession })
	if _, err := owner.Create(ctx, "/t/z", nil); err != nil {
		t.Fatal(err)
	}
	collect(t, w, func(ev WatchEvent) bool { return ev.Type == WatchCreated && ev.Path == "/t/z" })
}
