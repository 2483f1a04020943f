package framework

import (
	"bytes"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/internal/clock"
	"github.com/gocurator/curator/zktest"
)

// After a reconnection of a session with watches set, no reply to a request
// of ours reaches go-zookeeper before it has written its setWatches request:
// go-zookeeper reads its last zxid, unsynchronised, while it builds that
// request, and its receive loop writes it for every reply (the race
// detector's report in CI). A client with 50 watches set keeps requests
// coming through a cut, queued in go-zookeeper while it is disconnected so
// that they go out first on the new connection; the wire's log must show no
// reply handed on before setWatches was written.
func TestRequestsWaitForWatchesSetAgain(t *testing.T) {
	recordOps.Store(true)
	defer recordOps.Store(false)
	proxy := zktest.NewProxy(t, server(t).Addr())
	c := connect(t, proxy.Addr(), WithNamespace(newNamespace(t)), WithSessionTimeout(10*time.Second))
	ctx := testCtx(t)
	for i := range 50 {
		p := fmt.Sprintf("/w/n%02d", i)
		if _, err := c.Create(ctx, p, nil, CreatingParents()); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := c.GetW(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	states := record(c)
	defer states.cancel()

	// Requests made on go-zookeeper itself while it is disconnected wait
	// in its queue and go out first on the new connection, before its
	// setWatches: the case the framework's own requests avoid but cannot
	// rule out (one queued as the connection drops).
	raw := c.Conn()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, _, _ = raw.Exists(c.full("/w"))
			}
		}()
	}
	proxy.Cut()
	states.expect(t, testTimeout, connstate.Suspended)
	proxy.Restore()
	states.expect(t, testTimeout, connstate.Reconnected)
	// One request of our own through the new connection, then look at
	// what was written.
	if _, err := c.Exists(ctx, "/w"); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()

	c.mu.Lock()
	w := c.h.wire
	c.mu.Unlock()
	ops := w.writtenOps()
	const opSetWatches = 101
	set := false
	for _, op := range ops {
		switch op {
		case opSetWatches:
			set = true
		case opReplyReleased:
			if !set {
				t.Fatalf("a reply was handed on before setWatches was written (held past its bound): %v", ops[:min(len(ops), 12)])
			}
		case opReplyEarly:
			t.Fatalf("a reply to a request reached go-zookeeper before setWatches was written: %v", ops[:min(len(ops), 12)])
		}
	}
	if !set {
		t.Fatalf("no setWatches after the reconnection (opcodes %v)", ops[:min(len(ops), 12)])
	}
}

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
	newConn := func(gate bool) *wireConn {
		w := newWire(0, clock.Real)
		cc := &chunkConn{data: append([]byte(nil), stream...)}
		c := &wireConn{Conn: cc, w: w, watchesSet: make(chan struct{})}
		if !gate {
			c.setSeen = true
			close(c.watchesSet)
		}
		if _, err := c.Write(connectRequestFrame()); err != nil {
			t.Fatal(err)
		}
		return c
	}
	readAll := func(c *wireConn) []byte {
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
	if _, err := c.Write(request(9, wireOpSetWatches)); err != nil {
		t.Fatal(err)
	}
	if out := <-got; !bytes.Equal(out, stream) {
		t.Fatal("bytes changed")
	}
	c.sentMu.Lock()
	ops := append([]int32(nil), c.ops...)
	c.sentMu.Unlock()
	want := []int32{wireOpSetWatches, opReplyReleased}
	if !slices.Equal(ops, want) && !slices.Equal(ops, []int32{wireOpSetWatches}) {
		t.Fatalf("ops %v, want setWatches before the reply's release", ops)
	}
	if slices.Contains(ops, opReplyEarly) {
		t.Fatalf("a reply reached go-zookeeper before setWatches: %v", ops)
	}

	// setWatches never comes (the count was wrong): the reply goes on
	// after the bound, and the connection holds nothing after.
	defer func(d time.Duration) { watchResetWait = d }(watchResetWait)
	watchResetWait = time.Millisecond
	c = newConn(true)
	if out := readAll(c); !bytes.Equal(out, stream) {
		t.Fatal("bytes changed")
	}
	if !slices.Equal(c.ops, []int32{opReplyReleased}) || !c.gateClosed() {
		t.Fatalf("after the bound: ops %v, gate closed %v", c.ops, c.gateClosed())
	}
}

// writtenOps returns the opcodes written on the live connection so far
// (with recordOps on).
func (w *wire) writtenOps() []int32 {
	w.mu.Lock()
	live := w.live
	w.mu.Unlock()
	if live == nil {
		return nil
	}
	live.sentMu.Lock()
	defer live.sentMu.Unlock()
	return append([]int32(nil), live.ops...)
}
