package zkconn

import (
	"bytes"
	"slices"
	"testing"
	"time"

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
