package zkconn

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/clock"
	"github.com/gocurator/curator/internal/zkwire"
)

// The wire's side of it, frame by frame: on a connection whose watches
// are to be set again, a reply to a request (xid >= 0) is handed on only
// once setWatches is written, while the connect response, credentials'
// replies, pings and notifications pass at once; with nothing to set again,
// nothing waits.
func TestWireHoldsRepliesUntilWatchesSet(t *testing.T) {
	recordOps.Store(true)
	defer recordOps.Store(false)
	stream := append(connectReply(6000), reply(-4)...) // credentials' reply
	stream = append(stream, reply(-2)...)              // ping
	stream = append(stream, reply(-1)...)              // notification
	stream = append(stream, reply(5)...)               // a request's reply
	newConn := func(gate bool) *Conn {
		w := NewWire(Config{})
		cc := &chunkConn{data: append([]byte(nil), stream...)}
		c := &Conn{Conn: cc, w: w, watchesSet: make(chan struct{})}
		if !gate {
			c.setSeen = true
			close(c.watchesSet)
		}
		if _, err := c.Write(connectRequestFrame()); err != nil {
			t.Fatal(err)
		}
		return c
	}
	readAll := func(c *Conn) []byte {
		var out []byte
		buf := make([]byte, 64)
		for {
			n, err := c.Read(buf)
			if n == 0 || err != nil {
				return out
			}
			out = append(out, buf[:n]...)
		}
	}

	// Nothing to set again: all passes, nothing held.
	c := newConn(false)
	if out := readAll(c); !bytes.Equal(out, stream) {
		t.Fatal("bytes changed")
	}
	if len(c.ops) != 0 {
		t.Fatalf("held with nothing to wait for: %v", c.ops)
	}

	// Watches to set again: the request's reply waits for setWatches,
	// written by another goroutine (go-zookeeper's send loop).
	c = newConn(true)
	got := make(chan []byte, 1)
	go func() { got <- readAll(c) }()
	if _, err := c.Write(request(9, zkwire.OpSetWatches)); err != nil {
		t.Fatal(err)
	}
	if out := <-got; !bytes.Equal(out, stream) {
		t.Fatal("bytes changed")
	}
	c.sentMu.Lock()
	ops := append([]int32(nil), c.ops...)
	c.sentMu.Unlock()
	want := []int32{zkwire.OpSetWatches, OpReplyReleased}
	if !slices.Equal(ops, want) && !slices.Equal(ops, []int32{zkwire.OpSetWatches}) {
		t.Fatalf("ops %v, want setWatches before the reply's release", ops)
	}
	if slices.Contains(ops, OpReplyEarly) {
		t.Fatalf("a reply reached go-zookeeper before setWatches: %v", ops)
	}

	// setWatches never comes (the count was wrong): the reply goes on
	// after the bound, and the connection holds nothing after.
	defer func(d time.Duration) { resetWait = d }(resetWait)
	resetWait = time.Millisecond
	c = newConn(true)
	if out := readAll(c); !bytes.Equal(out, stream) {
		t.Fatal("bytes changed")
	}
	if !slices.Equal(c.ops, []int32{OpReplyReleased}) || !c.gateClosed() {
		t.Fatalf("after the bound: ops %v, gate closed %v", c.ops, c.gateClosed())
	}
}

// watchRead is a getData request frame with its watch flag on (or off).
func watchRead(xid int32, path string, watch bool) []byte {
	p := binary.BigEndian.AppendUint32(nil, uint32(xid))
	p = binary.BigEndian.AppendUint32(p, uint32(zkwire.OpGetData))
	p = binary.BigEndian.AppendUint32(p, uint32(len(path)))
	p = append(p, path...)
	flag := byte(0)
	if watch {
		flag = 1
	}
	return frame(append(p, flag))
}

// The settle window, on a connection that had no watch to set again (a
// new session): once a reply that gives go-zookeeper a watch has passed,
// the replies after it wait for setWatches or for the end of the window,
// measured from the connect response; without such a reply, or after the
// window, nothing waits.
func TestWireSettleWindow(t *testing.T) {
	recordOps.Store(true)
	defer recordOps.Store(false)
	fake := clock.NewFake(time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC))
	defer func(c clock.Clock) { settleClock = c }(settleClock)
	settleClock = fake

	stream := append(connectReply(6000), reply(5)...) // the watch read's reply
	stream = append(stream, reply(-1)...)             // a notification passes
	stream = append(stream, reply(6)...)              // the next reply: held
	newConn := func(watch bool) *Conn {
		cc := &chunkConn{data: append([]byte(nil), stream...)}
		c := &Conn{Conn: cc, w: NewWire(Config{}), watchesSet: make(chan struct{}), setWritten: make(chan struct{})}
		c.setSeen = true // nothing to set again at the dial
		close(c.watchesSet)
		for _, f := range [][]byte{connectRequestFrame(), watchRead(5, "/a", watch), request(6, zkwire.OpCreate2)} {
			if _, err := c.Write(f); err != nil {
				t.Fatal(err)
			}
		}
		return c
	}
	readAll := func(c *Conn) []byte {
		var out []byte
		buf := make([]byte, 64)
		for {
			n, err := c.Read(buf)
			if n == 0 || err != nil {
				return out
			}
			out = append(out, buf[:n]...)
		}
	}
	ops := func(c *Conn) []int32 {
		c.sentMu.Lock()
		defer c.sentMu.Unlock()
		var o []int32
		for _, op := range c.ops {
			if op < 0 {
				o = append(o, op)
			} else if op == zkwire.OpSetWatches {
				o = append(o, op)
			}
		}
		return o
	}
	held := func(c *Conn) func() []byte {
		got := make(chan []byte, 1)
		go func() { got <- readAll(c) }()
		for i := 0; len(fake.Pending()) == 0; i++ { // the reader waits in the window
			if i == 5000 {
				t.Fatal("the reply after the watch read was not held")
			}
			time.Sleep(time.Millisecond)
		}
		return func() []byte { return <-got }
	}

	// No watch read: nothing waits.
	c := newConn(false)
	if out := readAll(c); !bytes.Equal(out, stream) || len(ops(c)) != 0 {
		t.Fatalf("without a watch: bytes equal %v, ops %v", bytes.Equal(out, stream), ops(c))
	}

	// go-zookeeper writes setWatches (it found the watch): the held reply
	// goes on then.
	c = newConn(true)
	wait := held(c)
	if _, err := c.Write(request(9, zkwire.OpSetWatches)); err != nil {
		t.Fatal(err)
	}
	if out := wait(); !bytes.Equal(out, stream) {
		t.Fatal("bytes changed")
	}
	if got := ops(c); !slices.Equal(got, []int32{zkwire.OpSetWatches, OpReplySettled}) {
		t.Fatalf("ops %v, want setWatches, then the held reply", got)
	}

	// No setWatches (sendSetWatches had run, finding none): the reply
	// goes on at the window's end.
	c = newConn(true)
	wait = held(c)
	fake.Advance(settleWait)
	if out := wait(); !bytes.Equal(out, stream) {
		t.Fatal("bytes changed")
	}
	if got := ops(c); !slices.Equal(got, []int32{OpReplySettled}) {
		t.Fatalf("ops %v, want the reply held to the window's end", got)
	}

	// After the window, nothing waits.
	c = newConn(true)
	first := make([]byte, len(connectReply(6000)))
	if _, err := io.ReadFull(c, first); err != nil {
		t.Fatal(err)
	}
	fake.Advance(settleWait)
	if out := append(first, readAll(c)...); !bytes.Equal(out, stream) || len(ops(c)) != 0 {
		t.Fatalf("after the window: bytes equal %v, ops %v", bytes.Equal(out, stream), ops(c))
	}
}

// setsWatch reads the watch flag of exists, getData and getChildren, and
// nothing else.
func TestSetsWatch(t *testing.T) {
	withOp := func(op int32, watch bool) []byte {
		f := watchRead(3, "/x/y", watch)
		binary.BigEndian.PutUint32(f[8:12], uint32(op))
		return f
	}
	for _, tc := range []struct {
		name string
		p    []byte
		want bool
	}{
		{"getData watched", withOp(zkwire.OpGetData, true), true},
		{"getData unwatched", withOp(zkwire.OpGetData, false), false},
		{"exists watched", withOp(zkwire.OpExists, true), true},
		{"getChildren watched", withOp(zkwire.OpGetChildren, true), true},
		{"getChildren2 watched", withOp(zkwire.OpGetChildren2, true), true},
		{"create", withOp(zkwire.OpCreate2, true), false},
		{"setWatches", withOp(zkwire.OpSetWatches, true), false},
		{"short", withOp(zkwire.OpGetData, true)[:14], false},
		{"path past the frame", withOp(zkwire.OpGetData, true)[:20], false},
	} {
		if got := setsWatch(tc.p); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A connection the client has replaced (after a client-side expiry) is
// closed in the background, and go-zookeeper may redial it first and
// resume the old session, setting its old watches again, while the
// client's count of watches was reset for the new connection: a retired
// Wire's replies wait for setWatches on every dial (the race seen in CI
// in the node and group tests' session_expired cases).
func TestRetiredWireWaitsForSetWatches(t *testing.T) {
	w := NewWire(Config{Counts: &Counts{}})
	dial := w.Dialer(func(string, string, time.Duration) (net.Conn, error) {
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		return a, nil
	})
	c, err := dial("tcp", "server", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !c.(*Conn).gateClosed() {
		t.Fatal("a live Wire with no watches counted waits for setWatches")
	}
	w.Retire()
	c, err = dial("tcp", "server", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if c.(*Conn).gateClosed() {
		t.Fatal("a retired Wire's redial hands replies on before setWatches")
	}
}
