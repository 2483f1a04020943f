package framework

import (
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/zktest"
)

// With digest credentials and CreatorACL, nodes are the creator's alone:
// other clients can neither read, write nor delete them, the owner can, and
// the owner's credentials survive a session expiry (the new session gets
// them again before any operation runs).
func TestCreatorACL(t *testing.T) {
	srv := server(t)
	ns := newNamespace(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	const sessionTimeout = 1500 * time.Millisecond
	owner := connect(t, proxy.Addr(), WithNamespace(ns), WithSessionTimeout(sessionTimeout),
		WithAuth("digest", []byte("user:pw")), WithACLProvider(CreatorACL()))
	ctx := testCtx(t)

	if _, err := owner.Create(ctx, "/secret", []byte("s3cr3t")); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Create(ctx, "/dir/leaf", []byte("leaf"), CreatingParents()); err != nil {
		t.Fatal(err)
	}
	// Every node the owner made, namespace and parents included, is
	// creator-only: digest user:<hash>, all permissions.
	for _, p := range []string{"/" + ns, "/" + ns + "/secret", "/" + ns + "/dir", "/" + ns + "/dir/leaf"} {
		acl, _, err := owner.Conn().GetACL(p)
		if err != nil {
			t.Fatalf("GetACL(%s): %v", p, err)
		}
		if len(acl) != 1 || acl[0].Scheme != "digest" || !strings.HasPrefix(acl[0].ID, "user:") || acl[0].Perms != zk.PermAll {
			t.Fatalf("ACL of %s = %+v, want digest user:<hash> with all permissions", p, acl)
		}
	}

	strangers := []struct {
		name string
		c    *Client
	}{
		{"no credentials", connectNS(t, ns)},
		{"wrong password", connectNS(t, ns, WithAuth("digest", []byte("user:wrong")))},
		{"other user", connectNS(t, ns, WithAuth("digest", []byte("other:pw")))},
	}
	for _, s := range strangers {
		t.Run(s.name, func(t *testing.T) {
			c := s.c
			if _, _, err := c.Get(ctx, "/secret"); !errors.Is(err, zk.ErrNoAuth) {
				t.Errorf("Get = %v, want zk.ErrNoAuth", err)
			}
			if _, _, _, err := c.GetW(ctx, "/secret"); !errors.Is(err, zk.ErrNoAuth) {
				t.Errorf("GetW = %v, want zk.ErrNoAuth", err)
			}
			if _, err := c.Set(ctx, "/secret", []byte("mine"), -1); !errors.Is(err, zk.ErrNoAuth) {
				t.Errorf("Set = %v, want zk.ErrNoAuth", err)
			}
			if err := c.Delete(ctx, "/secret"); !errors.Is(err, zk.ErrNoAuth) {
				t.Errorf("Delete = %v, want zk.ErrNoAuth", err)
			}
			if err := c.Delete(ctx, "/dir", DeletingChildren()); !errors.Is(err, zk.ErrNoAuth) {
				t.Errorf("Delete with children = %v, want zk.ErrNoAuth", err)
			}
			if _, _, err := c.Children(ctx, "/dir"); !errors.Is(err, zk.ErrNoAuth) {
				t.Errorf("Children = %v, want zk.ErrNoAuth", err)
			}
			if _, err := c.Create(ctx, "/dir/intruder", nil); !errors.Is(err, zk.ErrNoAuth) {
				t.Errorf("Create under the owner's node = %v, want zk.ErrNoAuth", err)
			}
			if _, err := c.Multi(ctx, SetOp("/secret", []byte("mine"), -1)); !errors.Is(err, zk.ErrNoAuth) {
				t.Errorf("Multi set = %v, want zk.ErrNoAuth", err)
			}
		})
	}
	if data, _, err := owner.Get(ctx, "/secret"); err != nil || string(data) != "s3cr3t" {
		t.Fatalf("owner's Get after the strangers tried = %q, %v", data, err)
	}

	// The owner keeps working.
	if _, err := owner.Set(ctx, "/secret", []byte("v2"), -1); err != nil {
		t.Fatalf("owner's Set: %v", err)
	}
	if kids, _, err := owner.Children(ctx, "/dir"); err != nil || len(kids) != 1 {
		t.Fatalf("owner's Children = %q, %v", kids, err)
	}

	// Expire the owner's session while it is cut off; the new session must
	// carry the credentials again.
	states := record(owner)
	defer states.cancel()
	first := owner.SessionID()
	proxy.Cut()
	states.expect(t, testTimeout, connstate.Suspended, connstate.Lost)
	proxy.Restore()
	states.expect(t, testTimeout, connstate.Reconnected)
	if sid := owner.SessionID(); sid == first || sid == 0 {
		t.Fatalf("session after expiry = %#x, want a new one (old %#x)", sid, first)
	}
	if data, _, err := owner.Get(ctx, "/secret"); err != nil || string(data) != "v2" {
		t.Fatalf("owner's Get on a new session = %q, %v; credentials not re-applied", data, err)
	}
	if _, err := owner.Set(ctx, "/secret", []byte("v3"), -1); err != nil {
		t.Fatalf("owner's Set on a new session: %v", err)
	}
	if _, err := owner.Create(ctx, "/after", []byte("x"), WithMode(Ephemeral)); err != nil {
		t.Fatalf("owner's Create on a new session: %v", err)
	}
	if _, _, err := strangers[0].c.Get(ctx, "/after"); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("stranger's Get of a node made on the new session = %v, want zk.ErrNoAuth", err)
	}
	if err := owner.Delete(ctx, "/dir", DeletingChildren()); err != nil {
		t.Fatalf("owner's Delete: %v", err)
	}
}

// The ACL provider is asked with the caller's paths, never the server's:
// "/" for the namespace node, then each parent and the node itself.
func TestACLProviderPaths(t *testing.T) {
	ns := newNamespace(t)
	var (
		mu    sync.Mutex
		asked []string
	)
	provider := ACLProviderFunc(func(p string) []zk.ACL {
		mu.Lock()
		asked = append(asked, p)
		mu.Unlock()
		return zk.WorldACL(zk.PermAll)
	})
	c := connectNS(t, ns, WithACLProvider(provider))
	ctx := testCtx(t)
	if _, err := c.Create(ctx, "/a/b/c", nil, CreatingParents()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Multi(ctx, CreateOp("/a/m", nil, Persistent)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{"/", "/a", "/a/b", "/a/b/c", "/a/m"} {
		if !slices.Contains(asked, want) {
			t.Errorf("provider never asked for %s; asked %q", want, asked)
		}
	}
	for _, p := range asked {
		if strings.Contains(p, ns) {
			t.Errorf("provider asked with a server path %s", p)
		}
	}
	// An explicit ACL wins over the provider's.
	if _, err := c.Create(ctx, "/ro", nil, WithACL(zk.WorldACL(zk.PermRead))); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Set(ctx, "/ro", []byte("x"), -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("Set on a read-only node = %v, want zk.ErrNoAuth", err)
	}
}

// trackingDialer counts the connections the client opens and closes.
type trackingDialer struct{ opened, closed atomic.Int64 }

func (d *trackingDialer) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	conn, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	d.opened.Add(1)
	return &trackedConn{Conn: conn, d: d}, nil
}

type trackedConn struct {
	net.Conn
	d    *trackingDialer
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() { c.d.closed.Add(1) })
	return c.Conn.Close()
}

// An auth scheme the server refuses (it answers AUTHFAILED and closes the
// connection; go-zookeeper then reconnects the same session without the
// credentials) must fail Connect with ErrAuthFailed wrapping the server's
// error, not hand out a client running without its credentials, and leave
// nothing running: no goroutine, no socket.
func TestConnectFailsWhenCredentialsRefused(t *testing.T) {
	srv := server(t)
	ignore := goleak.IgnoreCurrent()
	defer func() {
		closing.Wait() // go-zookeeper's Close may take its second
		goleak.VerifyNone(t, ignore)
	}()
	tests := []struct {
		name string
		opts []Option
	}{
		{"unknown scheme", []Option{WithAuth("nosuchscheme", []byte("x"))}},
		{"refused after accepted ones", []Option{WithAuth("digest", []byte("user:pw")), WithAuth("nosuchscheme", []byte("x"))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d trackingDialer
			c, err := Connect(testCtx(t), srv.ConnectString(), append(tt.opts, WithDialer(d.dial))...)
			if !errors.Is(err, ErrAuthFailed) || !errors.Is(err, zk.ErrAuthFailed) {
				t.Fatalf("Connect = %v, want ErrAuthFailed wrapping zk.ErrAuthFailed", err)
			}
			if !strings.Contains(err.Error(), "nosuchscheme") {
				t.Errorf("error %q does not name the scheme", err)
			}
			if c != nil {
				t.Fatal("Connect returned a client with its error")
			}
			if d.opened.Load() == 0 {
				t.Fatal("no connection was made")
			}
			eventually(t, testTimeout, "every connection closed", func() (bool, error) {
				return d.closed.Load() == d.opened.Load(), nil
			})
		})
	}
	// Credentials the server accepts connect, and work.
	ns := newNamespace(t)
	c := connectNS(t, ns, WithAuth("digest", []byte("user:pw")), WithACLProvider(CreatorACL()))
	ctx := testCtx(t)
	if _, err := c.Create(ctx, "/mine", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if data, _, err := c.Get(ctx, "/mine"); err != nil || string(data) != "x" {
		t.Fatalf("Get = %q, %v", data, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

// When the credentials are refused on a later connection of the client
// (the new session after a client-side expiry, whose credentials the client
// adds itself), operations must fail with ErrAuthFailed, never run without
// the credentials, and the refusal is logged at Error.
func TestCredentialsRefusedOnNewSession(t *testing.T) {
	srv := server(t)
	ns := newNamespace(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	core, logs := observer.New(zap.ErrorLevel)
	owner := connect(t, proxy.Addr(), WithNamespace(ns), WithSessionTimeout(1500*time.Millisecond),
		WithAuth("digest", []byte("user:pw")), WithACLProvider(CreatorACL()), WithLogger(zap.New(core)))
	ctx := testCtx(t)
	if _, err := owner.Create(ctx, "/fine", []byte("s3cr3t")); err != nil {
		t.Fatal(err)
	}
	// From now on the server refuses part of the credentials (as a server
	// could stop knowing a scheme): the test adds one it never knew.
	owner.mu.Lock()
	owner.opts.auth = append(owner.opts.auth[:len(owner.opts.auth):len(owner.opts.auth)],
		authInfo{scheme: "nosuchscheme", auth: []byte("x")})
	owner.mu.Unlock()

	states := record(owner)
	defer states.cancel()
	proxy.Cut()
	states.expect(t, testTimeout, connstate.Suspended, connstate.Lost)
	proxy.Restore()
	states.expect(t, testTimeout, connstate.Reconnected)
	for _, op := range operations() {
		t.Run(op.name, func(t *testing.T) {
			if err := op.call(ctx, owner, "/fine"); !errors.Is(err, ErrAuthFailed) {
				t.Fatalf("%s on a session whose credentials were refused = %v, want ErrAuthFailed", op.name, err)
			}
		})
	}
	if n := logs.FilterField(zap.String("scheme", "nosuchscheme")).Len(); n == 0 {
		t.Errorf("the refusal was not logged at Error; logged: %v", logs.All())
	}
}
