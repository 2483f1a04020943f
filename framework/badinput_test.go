package framework

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/retry"
)

// operation is one client call taking a path, for the tables below.
type operation struct {
	name string
	call func(ctx context.Context, c *Client, path string) error
}

func operations() []operation {
	return []operation{
		{"Create", func(ctx context.Context, c *Client, p string) error {
			_, err := c.Create(ctx, p, nil)
			return err
		}},
		{"Create protected", func(ctx context.Context, c *Client, p string) error {
			_, err := c.Create(ctx, p, nil, Protected(), WithMode(EphemeralSequential))
			return err
		}},
		{"Create with parents", func(ctx context.Context, c *Client, p string) error {
			_, err := c.Create(ctx, p, nil, CreatingParentContainers())
			return err
		}},
		{"Delete", func(ctx context.Context, c *Client, p string) error {
			return c.Delete(ctx, p)
		}},
		{"Delete guaranteed", func(ctx context.Context, c *Client, p string) error {
			return c.Delete(ctx, p, Guaranteed(), DeletingChildren())
		}},
		{"Exists", func(ctx context.Context, c *Client, p string) error {
			_, err := c.Exists(ctx, p)
			return err
		}},
		{"ExistsW", func(ctx context.Context, c *Client, p string) error {
			_, _, err := c.ExistsW(ctx, p)
			return err
		}},
		{"Get", func(ctx context.Context, c *Client, p string) error {
			_, _, err := c.Get(ctx, p)
			return err
		}},
		{"GetW", func(ctx context.Context, c *Client, p string) error {
			_, _, _, err := c.GetW(ctx, p)
			return err
		}},
		{"Set", func(ctx context.Context, c *Client, p string) error {
			_, err := c.Set(ctx, p, []byte("x"), -1)
			return err
		}},
		{"Children", func(ctx context.Context, c *Client, p string) error {
			_, _, err := c.Children(ctx, p)
			return err
		}},
		{"ChildrenW", func(ctx context.Context, c *Client, p string) error {
			_, _, _, err := c.ChildrenW(ctx, p)
			return err
		}},
		{"Multi create", func(ctx context.Context, c *Client, p string) error {
			_, err := c.Multi(ctx, CreateOp(p, nil, Persistent))
			return err
		}},
		{"Multi delete", func(ctx context.Context, c *Client, p string) error {
			_, err := c.Multi(ctx, DeleteOp(p, -1))
			return err
		}},
		{"Multi set", func(ctx context.Context, c *Client, p string) error {
			_, err := c.Multi(ctx, SetOp(p, nil, -1))
			return err
		}},
		{"Multi check", func(ctx context.Context, c *Client, p string) error {
			_, err := c.Multi(ctx, CheckOp("/fine", -1), CheckOp(p, -1))
			return err
		}},
	}
}

func TestInvalidPaths(t *testing.T) {
	ns := newNamespace(t)
	c := connectNS(t, ns)
	ctx := testCtx(t)
	paths := []struct{ name, path string }{
		{"empty", ""},
		{"relative", "a"},
		{"relative nested", "a/b"},
		{"trailing slash", "/a/"},
		{"double slash only", "//"},
		{"double slash", "/a//b"},
		{"dot", "/."},
		{"dot segment", "/a/./b"},
		{"final dot", "/a/."},
		{"dotdot", "/.."},
		{"dotdot segment", "/a/../b"},
		{"NUL", "/a\x00b"},
		{"control character", "/a\x01b"},
		{"newline", "/a\nb"},
		{"tab", "/a\tb"},
		{"DEL", "/a\x7f"},
		{"C1 control", "/a\u0085"},
		{"invalid UTF-8", "/a\xff"},
		{"outside the BMP", "/a\U0001F600"},
		{"reserved", "/a\ue000"},
	}
	for _, op := range operations() {
		for _, p := range paths {
			t.Run(op.name+"/"+p.name, func(t *testing.T) {
				err := op.call(ctx, c, p.path)
				if !errors.Is(err, ErrInvalidPath) {
					t.Fatalf("%s(%q) = %v, want ErrInvalidPath", op.name, p.path, err)
				}
			})
		}
	}
	// The root exists but is not the client's to create or delete.
	if _, err := c.Create(ctx, "/", nil); !errors.Is(err, ErrInvalidPath) {
		t.Errorf("Create(/) = %v, want ErrInvalidPath", err)
	}
	if err := c.Delete(ctx, "/"); !errors.Is(err, ErrInvalidPath) {
		t.Errorf("Delete(/) = %v, want ErrInvalidPath", err)
	}
	// Nothing was created by any of the calls above.
	if st, err := c.Exists(ctx, "/"); err != nil || st != nil {
		t.Errorf("the namespace exists after invalid calls only: %+v, %v", st, err)
	}
}

// Invalid connect strings and options fail Connect at once, before any
// network work, and leave no goroutine.
func TestConnectRejectsBadInput(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := testCtx(t)
	const addr = "127.0.0.1:2181"
	connectStrings := []string{
		"",
		"   ",
		",",
		addr + ",",
		"," + addr,
		":2181",
		"127.0.0.1:",
		"127.0.0.1:0",
		"127.0.0.1:65536",
		"127.0.0.1:-1",
		"127.0.0.1:port",
		"[::1",
		"bad host:2181",
		"/chroot",
		addr + "/chroot/",
		addr + "//chroot",
		addr + "/a/../b",
		addr + "/a/./b",
		addr + "/a\x00b",
		addr + "/a\x01b",
		addr + "/chroot\U0001F600",
		addr + "/\U0001F600/a",
	}
	for _, cs := range connectStrings {
		c, err := Connect(ctx, cs)
		if !errors.Is(err, ErrInvalidConnectString) {
			t.Errorf("Connect(%q) = %v, want ErrInvalidConnectString", cs, err)
		}
		if c != nil {
			t.Errorf("Connect(%q) returned a client with its error", cs)
			c.Close()
		}
	}

	options := []struct {
		name string
		opt  Option
	}{
		{"nil option", nil},
		{"zero session timeout", WithSessionTimeout(0)},
		{"negative session timeout", WithSessionTimeout(-time.Second)},
		{"zero connection timeout", WithConnectionTimeout(0)},
		{"negative connection timeout", WithConnectionTimeout(-time.Second)},
		{"nil retry policy", WithRetryPolicy(nil)},
		{"nil logger", WithLogger(nil)},
		{"nil error policy", WithErrorPolicy(nil)},
		{"empty auth scheme", WithAuth("", []byte("user:pw"))},
		{"nil ACL provider", WithACLProvider(nil)},
		{"nil dialer", WithDialer(nil)},
		{"expiry percent 0", WithSessionExpiryPercent(0)},
		{"expiry percent 101", WithSessionExpiryPercent(101)},
		{"namespace with an empty segment", WithNamespace("//app")},
		{"namespace with trailing slash", WithNamespace("app/")},
		{"namespace with dotdot", WithNamespace("app/../x")},
		{"namespace with NUL", WithNamespace("a\x00")},
		{"namespace outside the BMP", WithNamespace("app\U0001F600")},
		{"namespace segment outside the BMP", WithNamespace("app/\U0001F600")},
		{"zero jute.maxbuffer", WithJuteMaxBuffer(0)},
		{"negative jute.maxbuffer", WithJuteMaxBuffer(-1)},
	}
	for _, o := range options {
		c, err := Connect(ctx, addr, WithSessionTimeout(time.Second), o.opt)
		if !errors.Is(err, ErrInvalidOption) {
			t.Errorf("Connect with %s = %v, want ErrInvalidOption", o.name, err)
		}
		if c != nil {
			c.Close()
		}
	}
	// Rejected at Connect, not at every later operation. (A short ctx
	// keeps a regression from waiting for a server that is not there.)
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if _, err := Connect(short, addr, WithRetryPolicy(retry.NTimes(-1, 0))); !errors.Is(err, ErrInvalidOption) || !errors.Is(err, retry.ErrInvalidPolicy) {
		t.Errorf("Connect with an invalid retry policy = %v, want ErrInvalidOption wrapping retry.ErrInvalidPolicy", err)
	}
	var nilCtx context.Context
	if c, err := Connect(nilCtx, addr); err == nil || c != nil {
		t.Errorf("Connect(nil ctx) = %v, %v; want an error", c, err)
	}
}

// Connect to a server that never answers returns ctx's error when ctx ends
// first, and leaves nothing running.
func TestConnectUnreachable(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	defer func() {
		closing.Wait() // go-zookeeper's Close may take its second
		goleak.VerifyNone(t, ignore)
	}()
	tests := []struct {
		name string
		opts []Option
	}{
		{"plain", nil},
		{"with auth", []Option{WithAuth("digest", []byte("user:pw"))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			// Port 1 on loopback refuses connections.
			c, err := Connect(ctx, "127.0.0.1:1", tt.opts...)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Connect = %v, want context.DeadlineExceeded", err)
			}
			if c != nil {
				t.Fatal("Connect returned a client with its error")
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("Connect returned %v after a 300ms deadline", d)
			}
		})
	}
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := Connect(ctx, "127.0.0.1:1"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Connect with a cancelled ctx = %v, want context.Canceled", err)
		}
	})
	t.Run("connection timeout", func(t *testing.T) {
		_, err := Connect(context.Background(), "127.0.0.1:1", WithConnectionTimeout(300*time.Millisecond))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Connect past the connection timeout = %v, want context.DeadlineExceeded", err)
		}
	})
}

// Bad options and arguments to operations are rejected without a round
// trip, with ErrInvalidOption.
func TestOperationsRejectBadOptions(t *testing.T) {
	ns := newNamespace(t)
	c := connectNS(t, ns)
	ctx := testCtx(t)
	var nilCtx context.Context
	tests := []struct {
		name string
		call func() error
	}{
		{"nil create option", func() error { _, err := c.Create(ctx, "/x", nil, nil); return err }},
		{"nil create option after a good one", func() error {
			_, err := c.Create(ctx, "/x", nil, Protected(), nil)
			return err
		}},
		{"unknown mode", func() error { _, err := c.Create(ctx, "/x", nil, WithMode(Mode(99))); return err }},
		{"negative mode", func() error { _, err := c.Create(ctx, "/x", nil, WithMode(Mode(-1))); return err }},
		{"zero TTL", func() error {
			_, err := c.Create(ctx, "/x", nil, WithMode(PersistentWithTTL), WithTTL(0))
			return err
		}},
		{"negative TTL", func() error {
			_, err := c.Create(ctx, "/x", nil, WithMode(PersistentWithTTL), WithTTL(-time.Second))
			return err
		}},
		{"TTL mode without TTL", func() error { _, err := c.Create(ctx, "/x", nil, WithMode(PersistentWithTTL)); return err }},
		{"TTL without TTL mode", func() error { _, err := c.Create(ctx, "/x", nil, WithTTL(time.Minute)); return err }},
		{"empty ACL", func() error { _, err := c.Create(ctx, "/x", nil, WithACL(nil)); return err }},
		{"nil delete option", func() error { return c.Delete(ctx, "/x", nil) }},
		{"delete version -2", func() error { return c.Delete(ctx, "/x", WithVersion(-2)) }},
		{"set version -2", func() error { _, err := c.Set(ctx, "/x", nil, -2); return err }},
		{"empty transaction", func() error { _, err := c.Multi(ctx); return err }},
		{"container in a transaction", func() error { _, err := c.Multi(ctx, CreateOp("/x", nil, Container)); return err }},
		{"TTL node in a transaction", func() error {
			_, err := c.Multi(ctx, CreateOp("/x", nil, PersistentWithTTL))
			return err
		}},
		{"unknown mode in a transaction", func() error { _, err := c.Multi(ctx, CreateOp("/x", nil, Mode(42))); return err }},
		{"nil ctx Create", func() error { _, err := c.Create(nilCtx, "/x", nil); return err }},
		{"nil ctx protected Create", func() error { _, err := c.Create(nilCtx, "/x", nil, Protected()); return err }},
		{"nil ctx Delete", func() error { return c.Delete(nilCtx, "/x") }},
		{"nil ctx guaranteed Delete", func() error { return c.Delete(nilCtx, "/x", Guaranteed()) }},
		{"nil ctx Exists", func() error { _, err := c.Exists(nilCtx, "/x"); return err }},
		{"nil ctx ExistsW", func() error { _, _, err := c.ExistsW(nilCtx, "/x"); return err }},
		{"nil ctx Get", func() error { _, _, err := c.Get(nilCtx, "/x"); return err }},
		{"nil ctx GetW", func() error { _, _, _, err := c.GetW(nilCtx, "/x"); return err }},
		{"nil ctx Set", func() error { _, err := c.Set(nilCtx, "/x", nil, -1); return err }},
		{"nil ctx Children", func() error { _, _, err := c.Children(nilCtx, "/x"); return err }},
		{"nil ctx ChildrenW", func() error { _, _, _, err := c.ChildrenW(nilCtx, "/x"); return err }},
		{"nil ctx Multi", func() error { _, err := c.Multi(nilCtx, CreateOp("/x", nil, Persistent)); return err }},
		{"nil ctx BlockUntilConnected", func() error { return c.BlockUntilConnected(nilCtx) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); !errors.Is(err, ErrInvalidOption) {
				t.Fatalf("got %v, want ErrInvalidOption", err)
			}
		})
	}
	if st, err := c.Exists(ctx, "/x"); err != nil || st != nil {
		t.Fatalf("a rejected call created /x: %+v, %v", st, err)
	}
}

// Every call after Close returns ErrClosed (errors.Is), whatever it is.
func TestCallsAfterClose(t *testing.T) {
	ns := newNamespace(t)
	c := connectNS(t, ns)
	ctx := testCtx(t)
	if _, err := c.Create(ctx, "/fine", nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	for _, op := range operations() {
		t.Run(op.name, func(t *testing.T) {
			if err := op.call(ctx, c, "/fine"); !errors.Is(err, ErrClosed) {
				t.Fatalf("%s after Close = %v, want ErrClosed", op.name, err)
			}
		})
	}
	if err := c.BlockUntilConnected(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("BlockUntilConnected after Close = %v, want ErrClosed", err)
	}
	select {
	case <-c.Done():
	default:
		t.Error("Done() not closed after Close")
	}
	if c.SessionID() != 0 {
		t.Errorf("SessionID() = %#x after Close, want 0", c.SessionID())
	}
	// Listen after Close never calls the listener and its cancel is safe.
	called := make(chan connstate.State, 1)
	cancel := c.Listen(func(s connstate.State) { called <- s })
	cancel()
	if len(called) != 0 {
		t.Error("a listener added after Close was called")
	}
}

// Close while several goroutines work the client: every call returns nil
// or ErrClosed, none hangs, and nothing is left running (TestMain checks
// for leaks; -race for races).
func TestCloseDuringLoad(t *testing.T) {
	ns := newNamespace(t)
	c := connectNS(t, ns)
	ctx := testCtx(t)
	if _, err := c.Create(ctx, "/load", nil); err != nil {
		t.Fatal(err)
	}
	const workers = 4
	var ops atomic.Int64
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			errs <- func() error {
				for i := 0; ; i++ {
					p, err := c.Create(ctx, fmt.Sprintf("/load/w%d-", w), nil,
						WithMode(EphemeralSequential), Protected())
					if err != nil {
						return err
					}
					if _, _, err := c.Get(ctx, p); err != nil {
						return err
					}
					if _, _, _, err := c.ChildrenW(ctx, "/load"); err != nil {
						return err
					}
					if err := c.Delete(ctx, p, Guaranteed()); err != nil {
						return err
					}
					ops.Add(1)
				}
			}()
		}()
	}
	eventually(t, testTimeout, "load running", func() (bool, error) { return ops.Load() >= 40, nil })
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for range workers {
		if err := waitEvent(t, errs, testTimeout, "worker to stop"); !errors.Is(err, ErrClosed) {
			t.Errorf("worker stopped with %v, want ErrClosed", err)
		}
	}
}

// WithDialer's dialer makes every connection.
func TestWithDialer(t *testing.T) {
	var dials atomic.Int64
	dialer := func(network, addr string, timeout time.Duration) (net.Conn, error) {
		dials.Add(1)
		return net.DialTimeout(network, addr, timeout)
	}
	c := connect(t, server(t).ConnectString(), WithDialer(dialer))
	if dials.Load() == 0 {
		t.Fatal("the dialer was not used")
	}
	if _, err := c.Exists(testCtx(t), "/"); err != nil {
		t.Fatal(err)
	}
	// Accessors report the options.
	policy := retry.NTimes(3, time.Millisecond)
	d := connect(t, server(t).ConnectString(), WithRetryPolicy(policy), WithErrorPolicy(connstate.SessionPolicy{}))
	if _, ok := d.ErrorPolicy().(connstate.SessionPolicy); !ok {
		t.Errorf("ErrorPolicy() = %T, want connstate.SessionPolicy", d.ErrorPolicy())
	}
	if d.RetryPolicy() != policy {
		t.Errorf("RetryPolicy() = %v, want the option's", d.RetryPolicy())
	}
	if _, ok := c.ErrorPolicy().(connstate.StandardPolicy); !ok {
		t.Errorf("default ErrorPolicy() = %T, want connstate.StandardPolicy", c.ErrorPolicy())
	}
}
