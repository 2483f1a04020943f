package zkconn

import (
	"bytes"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/clock"
)

// scriptConn is a net.Conn whose writes are discarded and whose reads come
// from a buffer the test fills.
type scriptConn struct {
	net.Conn
	in bytes.Buffer
}

func (s *scriptConn) Write(p []byte) (int, error) { return len(p), nil }

func (s *scriptConn) Read(p []byte) (int, error) { return s.in.Read(p) }

func frame(payload []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(payload)))
	return append(b, payload...)
}

// request is a request frame: xid, opcode, and a little body.
func request(xid int32, op int32) []byte {
	p := binary.BigEndian.AppendUint32(nil, uint32(xid))
	p = binary.BigEndian.AppendUint32(p, uint32(op))
	return frame(append(p, 0, 0, 0, 0))
}

// reply is a reply frame: xid, zxid, err.
func reply(xid int32) []byte {
	p := binary.BigEndian.AppendUint32(nil, uint32(xid))
	p = binary.BigEndian.AppendUint64(p, 7)
	p = binary.BigEndian.AppendUint32(p, 0)
	return frame(p)
}

// connectReply is a connect response with the given timeout.
func connectReply(timeoutMs int32) []byte {
	p := binary.BigEndian.AppendUint32(nil, 0)
	p = binary.BigEndian.AppendUint32(p, uint32(timeoutMs))
	p = binary.BigEndian.AppendUint64(p, 0x1234)
	p = binary.BigEndian.AppendUint32(p, 16)
	return frame(append(p, make([]byte, 16)...))
}

// The expiry watchdog's clock: only a reply to one of our requests moves
// it, to that request's send time; notifications, unknown xids and the
// connect response of an expired session prove nothing.
func TestWireAcknowledgements(t *testing.T) {
	fake := clock.NewFake(time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC))
	w := NewWire(Config{Clock: fake})
	sc := &scriptConn{}
	c := &Conn{Conn: sc, w: w}
	buf := make([]byte, 4096)
	read := func(frames ...[]byte) {
		t.Helper()
		for _, f := range frames {
			sc.in.Write(f)
		}
		for sc.in.Len() > 0 || c.in != nil && c.in.Buffered() > 0 {
			if _, err := c.Read(buf); err != nil {
				t.Fatal(err)
			}
		}
	}
	// write sends p a millisecond after the previous send and returns its
	// send time.
	write := func(p []byte) time.Time {
		t.Helper()
		fake.Advance(time.Millisecond)
		at := fake.Now()
		if _, err := c.Write(p); err != nil {
			t.Fatal(err)
		}
		return at
	}
	wantAcked := func(what string, want time.Time) {
		t.Helper()
		if got := w.Acked(); !got.Equal(want) {
			t.Fatalf("%s: acked %v, want %v", what, got, want)
		}
	}

	connectSent := write(frame(make([]byte, 40))) // the connect request
	wantAcked("before any reply", time.Time{})
	read(connectReply(3000))
	wantAcked("after the connect response", connectSent)
	if w.Timeout() != 3000 {
		t.Fatalf("negotiated timeout %d, want 3000", w.Timeout())
	}

	first := write(request(1, 4))
	ping := write(request(-2, 11))
	fake.Advance(time.Second) // replies come later: acked is the send time, not this
	read(reply(-1))           // a notification acknowledges nothing
	wantAcked("after a notification", connectSent)
	read(reply(99)) // not ours
	wantAcked("after an unknown xid", connectSent)
	read(reply(1))
	wantAcked("reply to the first request", first)
	read(reply(-2))
	wantAcked("ping reply", ping)

	// A connect response refusing an expired session proves nothing.
	w2 := NewWire(Config{Clock: fake})
	c2 := &Conn{Conn: &scriptConn{}, w: w2}
	sc2 := c2.Conn.(*scriptConn)
	if _, err := c2.Write(frame(make([]byte, 40))); err != nil {
		t.Fatal(err)
	}
	sc2.in.Write(connectReply(0))
	for sc2.in.Len() > 0 || c2.in != nil && c2.in.Buffered() > 0 {
		if _, err := c2.Read(buf); err != nil {
			t.Fatal(err)
		}
	}
	if !w2.Acked().IsZero() {
		t.Fatal("an expired session's connect response counted as an acknowledgement")
	}
}
