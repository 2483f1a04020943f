package framework

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/zktest"
)

// countingDialer counts the bytes the client writes to its servers.
func countingDialer(written *atomic.Int64) zk.Dialer {
	return func(network, addr string, timeout time.Duration) (net.Conn, error) {
		conn, err := net.DialTimeout(network, addr, timeout)
		if err != nil {
			return nil, err
		}
		return countingConn{Conn: conn, written: written}, nil
	}
}

type countingConn struct {
	net.Conn
	written *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.written.Add(int64(n))
	return n, err
}

// The request sizes below are worked out from the wire format, apart from
// the code under test: [xid][opcode] then the body, a string or buffer
// being [int32 length][bytes]. The server reads a packet whose length
// (after its own 4-byte length) is at most jute.maxbuffer, 0xfffff bytes by
// default: so the largest data that passes is jute.maxbuffer minus the
// rest of the request.
const (
	openACLSize  = 4 + 4 + (4 + len("world")) + (4 + len("anyone")) // one world:anyone ACL
	multiHdrSize = 4 + 1 + 4                                        // type, done, err
)

func createOverhead(fullPath string) int { return 8 + 4 + len(fullPath) + 4 + openACLSize + 4 }
func setOverhead(fullPath string) int    { return 8 + 4 + len(fullPath) + 4 + 4 }

// A request over jute.maxbuffer makes the server close the connection, and
// every hold of the client with it; retried, it would do so on every
// attempt and end with "connection closed". It must be refused before it is
// sent, with ErrDataTooLarge, while the largest request the server reads
// still passes, for every operation that sends data, and for long paths.
func TestOversizedRequestRefusedLocally(t *testing.T) {
	ns := newNamespace(t)
	var written atomic.Int64
	c := connectNS(t, ns, WithDialer(countingDialer(&written)),
		WithRetryPolicy(retry.NTimes(2, 10*time.Millisecond)))
	ctx := testCtx(t)
	states := record(c)
	defer states.cancel()
	sid := c.SessionID()
	full := func(p string) string { return "/" + ns + p }
	if _, err := c.Create(ctx, "/set", nil); err != nil {
		t.Fatal(err)
	}

	// The largest data the server reads in a plain create: measured
	// against the real server, see the raw check at the end.
	maxPlain := DefaultJuteMaxBuffer - createOverhead(full("/plain"))

	cases := []struct {
		name string
		// overhead is the request's size without its data
		overhead int
		// call sends the request with n bytes of data in all
		call func(n int) error
	}{
		{"Create", createOverhead(full("/plain")), func(n int) error {
			_, err := c.Create(ctx, "/plain", make([]byte, n))
			return err
		}},
		{"Create protected", createOverhead(full("/prot-")) + len("_c_") + 36 + len("-"), func(n int) error {
			_, err := c.Create(ctx, "/prot-", make([]byte, n), Protected(), WithMode(EphemeralSequential))
			return err
		}},
		{"Create TTL", createOverhead(full("/ttl")) + 8, func(n int) error {
			_, err := c.Create(ctx, "/ttl", make([]byte, n), WithMode(PersistentWithTTL), WithTTL(time.Hour))
			return err
		}},
		{"Create container", createOverhead(full("/cont")), func(n int) error {
			_, err := c.Create(ctx, "/cont", make([]byte, n), WithMode(Container))
			return err
		}},
		{"Create with parents", createOverhead(full("/p/q/r")), func(n int) error {
			_, err := c.Create(ctx, "/p/q/r", make([]byte, n), CreatingParentContainers())
			return err
		}},
		{"Set", setOverhead(full("/set")), func(n int) error {
			_, err := c.Set(ctx, "/set", make([]byte, n), -1)
			return err
		}},
		{"Multi", 8 + multiHdrSize + (createOverhead(full("/m1")) - 8) + multiHdrSize + (setOverhead(full("/set")) - 8) + multiHdrSize,
			func(n int) error {
				_, err := c.Multi(ctx, CreateOp("/m1", make([]byte, n-1), Persistent), SetOp("/set", []byte("x"), -1))
				return err
			}},
		// Two operations each well below the limit, together over it:
		// the transaction is one packet.
		{"Multi of halves", 8 + 2*(multiHdrSize+createOverhead(full("/h1"))-8) + multiHdrSize, func(n int) error {
			_, err := c.Multi(ctx, CreateOp("/h1", make([]byte, n/2), Persistent), CreateOp("/h2", make([]byte, n-n/2), Persistent))
			return err
		}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			maxData := DefaultJuteMaxBuffer - tt.overhead
			before := written.Load()
			err := tt.call(maxData + 1)
			if !errors.Is(err, ErrDataTooLarge) {
				t.Fatalf("%d bytes of data = %v, want ErrDataTooLarge", maxData+1, err)
			}
			if !strings.Contains(err.Error(), "jute.maxbuffer") {
				t.Errorf("error %q does not name the limit", err)
			}
			if d := written.Load() - before; d > 1024 {
				t.Fatalf("the refused request reached the wire: %d bytes written", d)
			}
			if err := tt.call(maxData); err != nil {
				t.Fatalf("%d bytes of data (the most the server reads) = %v, want success", maxData, err)
			}
		})
	}
	if _, _, err := c.Get(ctx, "/plain"); err != nil {
		t.Fatal(err)
	}

	// A path alone can make a request too large.
	long := "/" + strings.Repeat("p", DefaultJuteMaxBuffer-(8+4+1)-len(full("/")))
	if st, err := c.Exists(ctx, long); err != nil || st != nil {
		t.Fatalf("Exists of the longest path the server reads = %v, %v; want nil, nil", st, err)
	}
	long += "p"
	for _, op := range operations() {
		t.Run("long path "+op.name, func(t *testing.T) {
			before := written.Load()
			if strings.HasPrefix(op.name, "Delete") {
				// Delete does not size its requests yet: go-zookeeper's
				// send buffer, sized to jute.maxbuffer, refuses them
				// unsent. (Not at this exact length, where the children
				// listing of DeletingChildren would end with its watch
				// flag just past the buffer: go-zookeeper's encoder
				// panics on that.)
				err := op.call(ctx, c, long+strings.Repeat("p", 100))
				if !errors.Is(err, ErrDataTooLarge) && !errors.Is(err, zk.ErrShortBuffer) {
					t.Fatalf("%s with a path over jute.maxbuffer = %v, want ErrDataTooLarge or zk.ErrShortBuffer", op.name, err)
				}
			} else if err := op.call(ctx, c, long); !errors.Is(err, ErrDataTooLarge) {
				t.Fatalf("%s with a %d-byte path = %v, want ErrDataTooLarge", op.name, len(long), err)
			}
			if d := written.Load() - before; d > 1024 {
				t.Fatalf("the refused request reached the wire: %d bytes written", d)
			}
		})
	}

	// Nothing of the above disturbed the connection. A round trip first,
	// so that a drop after the largest requests has happened (this reply
	// would come on the connection after it) before the checks look.
	if _, err := c.Exists(ctx, "/plain"); err != nil {
		t.Fatal(err)
	}
	if got := c.SessionID(); got != sid {
		t.Errorf("session %#x became %#x", sid, got)
	}
	if s := c.State(); s != connstate.Connected {
		t.Errorf("state %v, want Connected", s)
	}
	select {
	case s := <-states.ch:
		t.Errorf("a listener saw %v", s)
	default:
	}

	// Through Conn(), the escape hatch, go-zookeeper's send buffer (sized
	// to jute.maxbuffer by the client) refuses it, unsent.
	before := written.Load()
	_, err := c.Conn().Create(full("/plain2"), make([]byte, maxPlain+1), 0, zk.WorldACL(zk.PermAll))
	if !errors.Is(err, zk.ErrShortBuffer) {
		t.Fatalf("create of %d bytes on Conn() = %v, want zk.ErrShortBuffer", maxPlain+1, err)
	}
	if d := written.Load() - before; d > 1024 {
		t.Fatalf("the refused request reached the wire: %d bytes written", d)
	}
	if got := c.SessionID(); got != sid {
		t.Errorf("session %#x became %#x", sid, got)
	}

	// The limit is the server's: one byte more in a plain create, sent
	// anyway by a bare go-zookeeper connection, makes the server close the
	// connection.
	raw, events, err := zk.Connect([]string{server(t).Addr()}, 10*time.Second, zk.WithLogger(zkLogger{zap.NewNop()}))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for waitEvent(t, events, testTimeout, "raw session").State != zk.StateHasSession {
	}
	_, err = raw.Create(full("/plain2"), make([]byte, maxPlain+1), 0, zk.WorldACL(zk.PermAll))
	// The server closes the connection once it has read the length; if
	// that happens while go-zookeeper is still writing the packet, the
	// write fails (EPIPE or ECONNRESET, handed back raw) instead of the
	// request failing with the connection: the same closing, seen sooner.
	if !errors.Is(err, zk.ErrConnectionClosed) && !errors.Is(err, syscall.EPIPE) && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("raw create of %d bytes = %v, want the server to close the connection", maxPlain+1, err)
	}
}

// WithJuteMaxBuffer matches the client to a server's jute.maxbuffer, lower
// or higher than the default (go-zookeeper's own send buffer, 1.5 MiB, is
// grown to fit).
func TestWithJuteMaxBuffer(t *testing.T) {
	t.Run("lower", func(t *testing.T) {
		ns := newNamespace(t)
		const limit = 4096
		c := connectNS(t, ns, WithJuteMaxBuffer(limit))
		ctx := testCtx(t)
		maxData := limit - createOverhead("/"+ns+"/x")
		if _, err := c.Create(ctx, "/x", make([]byte, maxData+1)); !errors.Is(err, ErrDataTooLarge) {
			t.Fatalf("Create over the configured limit = %v, want ErrDataTooLarge", err)
		}
		if _, err := c.Create(ctx, "/x", make([]byte, maxData)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("higher", func(t *testing.T) {
		const limit = 3 << 20
		srv, err := zktest.Launch(zktest.WithJVMArgs("-Djute.maxbuffer=3145728"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := srv.Close(); err != nil {
				t.Error(err)
			}
		})
		c := connect(t, srv.ConnectString(), WithJuteMaxBuffer(limit))
		ctx := testCtx(t)
		maxData := limit - createOverhead("/big")
		if _, err := c.Create(ctx, "/big", make([]byte, maxData+1)); !errors.Is(err, ErrDataTooLarge) {
			t.Fatalf("Create over the configured limit = %v, want ErrDataTooLarge", err)
		}
		data := bytes.Repeat([]byte("z"), maxData)
		if _, err := c.Create(ctx, "/big", data); err != nil {
			t.Fatalf("Create of %d bytes on a server with jute.maxbuffer=%d: %v", maxData, limit, err)
		}
		got, _, err := c.Get(ctx, "/big")
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("Get = %d bytes, %v; want the %d written", len(got), err, len(data))
		}
	})
	t.Run("credentials too large", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := Connect(ctx, server(t).ConnectString(), WithAuth("digest", make([]byte, DefaultJuteMaxBuffer)))
		if !errors.Is(err, ErrDataTooLarge) || !errors.Is(err, ErrInvalidOption) {
			t.Fatalf("Connect with credentials over jute.maxbuffer = %v, want ErrInvalidOption and ErrDataTooLarge", err)
		}
	})
}

// Delete sizes its request like every other operation: a path too long for
// the server is refused locally with ErrDataTooLarge, DeletingChildren
// included (its listing carries the path too).
func TestDeleteOversizedPathRefusedLocally(t *testing.T) {
	c := connectNS(t, newNamespace(t), WithJuteMaxBuffer(200))
	ctx := testCtx(t)
	long := "/" + strings.Repeat("x", 300)
	for _, opts := range [][]DeleteOption{nil, {DeletingChildren()}} {
		if err := c.Delete(ctx, long, opts...); !errors.Is(err, ErrDataTooLarge) {
			t.Fatalf("Delete of a %d-byte path = %v, want ErrDataTooLarge", len(long), err)
		}
	}
}
