package framework

import (
	"errors"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/zktest"
)

// A view shares the session of its client: its ephemeral nodes are the
// client's, its listeners hear the client's states, its Close is refused,
// and the client's Close ends it too.
func TestViewSharesTheSession(t *testing.T) {
	ctx := testCtx(t)
	srv := server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	ns := newNamespace(t)
	c := connect(t, proxy.Addr(), WithNamespace(ns+"-a"))
	raw := connect(t, srv.ConnectString())
	v, err := c.WithNamespace(ns + "-b")
	if err != nil {
		t.Fatal(err)
	}
	if !v.IsView() || c.IsView() {
		t.Fatalf("IsView: view %v, client %v", v.IsView(), c.IsView())
	}
	if got := v.Namespace(); got != ns+"-b" {
		t.Fatalf("view Namespace() = %q, want %q", got, ns+"-b")
	}
	if got := c.Namespace(); got != ns+"-a" {
		t.Fatalf("client Namespace() = %q after making a view, want %q", got, ns+"-a")
	}
	if v.SessionID() != c.SessionID() || v.SessionID() == 0 {
		t.Fatalf("view session 0x%x, client session 0x%x", v.SessionID(), c.SessionID())
	}

	p, err := v.Create(ctx, "/e", []byte("x"), WithMode(Ephemeral))
	if err != nil {
		t.Fatal(err)
	}
	if p != "/e" {
		t.Fatalf("view Create returned %q, want /e", p)
	}
	st, err := raw.Exists(ctx, "/"+ns+"-b/e")
	if err != nil || st == nil {
		t.Fatalf("raw Exists(/%s-b/e) = %v, %v", ns, st, err)
	}
	if st.EphemeralOwner != c.SessionID() {
		t.Fatalf("ephemeral owner 0x%x, want the client's session 0x%x", st.EphemeralOwner, c.SessionID())
	}
	if st, err := c.Exists(ctx, "/e"); err != nil || st != nil {
		t.Fatalf("client's own namespace sees the view's node: %v, %v", st, err)
	}

	// One set of listeners: a listener added through the view hears the
	// client's states.
	viewStates, clientStates := record(v), record(c)
	defer viewStates.cancel()
	defer clientStates.cancel()
	proxy.Cut()
	viewStates.expect(t, testTimeout, connstate.Suspended)
	clientStates.expect(t, testTimeout, connstate.Suspended)
	proxy.Restore()
	viewStates.expect(t, testTimeout, connstate.Reconnected)
	clientStates.expect(t, testTimeout, connstate.Reconnected)

	// Close on a view is refused and changes nothing (Curator's facade
	// throws).
	if err := v.Close(); !errors.Is(err, ErrCloseView) {
		t.Fatalf("view Close() = %v, want ErrCloseView", err)
	}
	select {
	case <-v.Done():
		t.Fatal("view Done closed by a refused Close")
	default:
	}
	if _, _, err := v.Get(ctx, "/e"); err != nil {
		t.Fatalf("view Get after its refused Close: %v", err)
	}

	sid := c.SessionID()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, v.Done(), testTimeout, "view Done after the client's Close")
	if _, _, err := v.Get(ctx, "/e"); !errors.Is(err, ErrClosed) {
		t.Fatalf("view Get after the client's Close = %v, want ErrClosed", err)
	}
	if v.SessionID() != 0 {
		t.Fatalf("view SessionID after Close = 0x%x", v.SessionID())
	}
	eventually(t, testTimeout, "the view's ephemeral to go with the session", func() (bool, error) {
		st, err := raw.Exists(ctx, "/"+ns+"-b/e")
		return st == nil && err == nil, err
	})
	awaitNoServerWatches(t, srv.Addr(), sid)
}

// A view's namespace replaces the client's (Curator's usingNamespace) and
// sits under the connect string's chroot; "" drops the namespace but keeps
// the chroot.
func TestViewNamespaceKeepsTheChroot(t *testing.T) {
	ctx := testCtx(t)
	ns := newNamespace(t)
	raw := connect(t, server(t).ConnectString())
	c := connect(t, server(t).ConnectString()+"/"+ns, WithNamespace("app"))

	tests := []struct {
		name, ns, wantNamespace, wantServerPath string
	}{
		{"replaces the client's", "other", "other", "/" + ns + "/other/n"},
		{"leading slash", "/lead", "lead", "/" + ns + "/lead/n"},
		{"nested", "a/b", "a/b", "/" + ns + "/a/b/n"},
		{"none keeps the chroot", "", "", "/" + ns + "/n"},
		{"slash is none", "/", "", "/" + ns + "/n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := c.WithNamespace(tt.ns)
			if err != nil {
				t.Fatal(err)
			}
			if got := v.Namespace(); got != tt.wantNamespace {
				t.Fatalf("Namespace() = %q, want %q", got, tt.wantNamespace)
			}
			if _, err := v.Create(ctx, "/n", nil, WithMode(Ephemeral)); err != nil {
				t.Fatal(err)
			}
			st, err := raw.Exists(ctx, tt.wantServerPath)
			if err != nil || st == nil {
				t.Fatalf("node not at %s: %v, %v", tt.wantServerPath, st, err)
			}
			if err := v.Delete(ctx, "/n"); err != nil {
				t.Fatal(err)
			}
		})
	}

	// A view of a view replaces the namespace again.
	v1, err := c.WithNamespace("one")
	if err != nil {
		t.Fatal(err)
	}
	v2, err := v1.WithNamespace("two")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v2.Create(ctx, "/n", nil, WithMode(Ephemeral)); err != nil {
		t.Fatal(err)
	}
	if st, err := raw.Exists(ctx, "/"+ns+"/two/n"); err != nil || st == nil {
		t.Fatalf("view of a view: node not at /%s/two/n: %v, %v", ns, st, err)
	}
	if err := v2.Delete(ctx, "/n"); err != nil {
		t.Fatal(err)
	}
}

// Bad namespaces are refused with ErrInvalidPath and no view.
func TestViewBadNamespace(t *testing.T) {
	c := connectNS(t, newNamespace(t))
	for _, ns := range []string{"app/", "//app", "a/../b", "a//b", "a\x00b", "./a"} {
		v, err := c.WithNamespace(ns)
		if !errors.Is(err, ErrInvalidPath) || v != nil {
			t.Errorf("WithNamespace(%q) = %v, %v; want nil, ErrInvalidPath", ns, v, err)
		}
	}
	var nilClient *Client
	if v, err := nilClient.WithNamespace("x"); v != nil || !errors.Is(err, ErrNilClient) {
		t.Errorf("nil client WithNamespace = %v, %v; want nil, ErrNilClient", v, err)
	}
	if nilClient.IsView() {
		t.Error("nil client IsView")
	}
}

// One-shot watches of a client and of its views share the pumps that
// strip prefixes; each event is stripped of the prefix of the view that
// set the watch.
func TestViewOneShotWatchStripsItsOwnPrefix(t *testing.T) {
	ctx := testCtx(t)
	ns := newNamespace(t)
	raw := connect(t, server(t).ConnectString())
	c := connectNS(t, ns+"/a")
	v, err := c.WithNamespace(ns + "/b")
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range []*Client{c, v} {
		if _, err := cl.Create(ctx, "/w", nil, WithMode(Ephemeral)); err != nil {
			t.Fatal(err)
		}
	}
	// The client's watch first, so that its pump serves the view's too.
	_, _, cw, err := c.GetW(ctx, "/w")
	if err != nil {
		t.Fatal(err)
	}
	_, _, vw, err := v.GetW(ctx, "/w")
	if err != nil {
		t.Fatal(err)
	}
	for _, full := range []string{"/" + ns + "/b/w", "/" + ns + "/a/w"} {
		if _, err := raw.Set(ctx, full, []byte("x"), -1); err != nil {
			t.Fatal(err)
		}
	}
	for name, ch := range map[string]<-chan zk.Event{"client": cw, "view": vw} {
		ev := waitEvent(t, ch, testTimeout, name+" watch")
		if ev.Type != zk.EventNodeDataChanged || ev.Path != "/w" {
			t.Errorf("%s watch: %v on %q, want data changed on /w", name, ev.Type, ev.Path)
		}
	}
	for _, cl := range []*Client{c, v} {
		if err := cl.Delete(ctx, "/w"); err != nil {
			t.Fatal(err)
		}
	}
}

// Watch through a view (Curator's NamespaceFacade broke PersistentWatcher,
// GH-1262): the persistent watch is set on the view's full path, events
// come with the view's paths, and Close removes the server's watch.
func TestViewPersistentWatch(t *testing.T) {
	ctx := testCtx(t)
	srv := server(t)
	ns := newNamespace(t)
	raw := connect(t, srv.ConnectString())
	c := connect(t, srv.ConnectString())
	v, err := c.WithNamespace(ns)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Create(ctx, "/tree", nil); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := raw.Delete(ctx, "/"+ns+"/tree", DeletingChildren()); err != nil {
			t.Error(err)
		}
	}()
	vw, err := v.Watch(ctx, "/tree", Recursive())
	if err != nil {
		t.Fatal(err)
	}
	defer vw.Close()
	// The client watches the same node by its full path: one server
	// watch, shared, each Watcher with its own paths.
	cw, err := c.Watch(ctx, "/"+ns+"/tree", Recursive())
	if err != nil {
		t.Fatal(err)
	}
	defer cw.Close()
	if !vw.Persistent() {
		t.Fatal("the view's Watcher is not persistent on a 3.8 server")
	}
	awaitServerWatches(t, srv.Addr(), c, "/"+ns+"/tree")

	if _, err := raw.Create(ctx, "/"+ns+"/tree/x", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Set(ctx, "/tree/x", []byte("2"), -1); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		w    *Watcher
		base string
	}{{"view", vw, "/tree"}, {"client", cw, "/" + ns + "/tree"}} {
		ev := waitEvent(t, tt.w.Events(), testTimeout, tt.name+" created")
		if ev.Type != WatchCreated || ev.Path != tt.base+"/x" {
			t.Fatalf("%s: %v %q, want created %s/x", tt.name, ev.Type, ev.Path, tt.base)
		}
		ev = waitEvent(t, tt.w.Events(), testTimeout, tt.name+" changed")
		if ev.Type != WatchDataChanged || ev.Path != tt.base+"/x" {
			t.Fatalf("%s: %v %q, want data changed %s/x", tt.name, ev.Type, ev.Path, tt.base)
		}
	}
	if err := vw.Close(); err != nil {
		t.Fatal(err)
	}
	// The client's Watcher still needs the server's watch.
	awaitServerWatches(t, srv.Addr(), c, "/"+ns+"/tree")
	if err := cw.Close(); err != nil {
		t.Fatal(err)
	}
	awaitServerWatches(t, srv.Addr(), c)
}
