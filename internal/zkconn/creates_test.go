package zkconn

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"

	"github.com/gocurator/curator/internal/zkwire"
)

// chunkConn is a net.Conn whose reads return the script's bytes in the
// chunks given (a TCP stream may split frames anywhere), and whose writes
// are discarded.
type chunkConn struct {
	scriptConn
	data   []byte
	chunks []int // sizes; the rest in one read
}

func (c *chunkConn) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, nil
	}
	n := len(c.data)
	if len(c.chunks) > 0 {
		n = min(max(c.chunks[0], 1), n)
		c.chunks = c.chunks[1:]
	}
	n = copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// createReply is a reply frame to a create: xid, zxid, err 0, the path.
func createReplyFrame(xid int32, zxid int64, path string) []byte {
	p := binary.BigEndian.AppendUint32(nil, uint32(xid))
	p = binary.BigEndian.AppendUint64(p, uint64(zxid))
	p = binary.BigEndian.AppendUint32(p, 0)
	p = binary.BigEndian.AppendUint32(p, uint32(len(path)))
	return frame(append(p, path...))
}

// createRequest is a create request frame for path.
func createRequestFrame(xid int32, path string) []byte {
	p := binary.BigEndian.AppendUint32(nil, uint32(xid))
	p = binary.BigEndian.AppendUint32(p, zkwire.OpCreate2)
	p = binary.BigEndian.AppendUint32(p, uint32(len(path)))
	p = append(p, path...)
	return frame(append(p, 0, 0, 0, 0))
}

// wireState is what a connection's frames told the wire.
type wireState struct {
	TimeoutMs int64
	Acked     bool
	Got       map[string]CreateReply
}

// feed writes the requests, then reads the replies in the given chunks,
// and returns what the wire recorded and the bytes the reader got.
func feed(t testing.TB, replies []byte, chunks []int) (wireState, []byte) {
	t.Helper()
	w := NewWire(Config{})
	w.Expect("/a/lock-")
	w.Expect("/b/lock-")
	cc := &chunkConn{data: append([]byte(nil), replies...), chunks: chunks}
	c := &Conn{Conn: cc, w: w}
	for _, req := range [][]byte{
		connectRequestFrame(),
		createRequestFrame(1, "/a/lock-"),
		request(2, 4),
		createRequestFrame(3, "/b/lock-"),
	} {
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
	}
	var out []byte
	buf := make([]byte, 7) // smaller than most frames: reads split them too
	for {
		n, err := c.Read(buf)
		if n == 0 || err != nil {
			break
		}
		out = append(out, buf[:n]...)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	got := map[string]CreateReply{}
	for k, v := range w.got {
		got[k] = v
	}
	return wireState{TimeoutMs: w.timeoutMs, Acked: !w.lastAck.IsZero(), Got: got}, out
}

func connectRequestFrame() []byte { return frame(make([]byte, 44)) }

// replyStream is the server's side of the conversation feed writes.
func replyStream() []byte {
	var b []byte
	b = append(b, connectReply(6000)...)
	b = append(b, createReplyFrame(1, 0x100, "/a/_c_x-lock-0000000001")...)
	b = append(b, reply(-1)...) // a notification in between
	b = append(b, reply(2)...)
	b = append(b, createReplyFrame(3, 0x101, "/b/_c_y-lock-0000000007")...)
	return b
}

// The reply parser reads the same whatever way the stream is cut into
// reads: every split of the stream into two reads, and frames cut into
// single bytes, give what one whole read gives, and every byte passes
// through unchanged.
func TestWireFramesSplitAcrossReads(t *testing.T) {
	stream := replyStream()
	want, out := feed(t, stream, nil)
	if !bytes.Equal(out, stream) {
		t.Fatal("the bytes read differ from the bytes sent")
	}
	if want.TimeoutMs != 6000 || !want.Acked || len(want.Got) != 2 ||
		want.Got["/a/lock-"].Path != "/a/_c_x-lock-0000000001" || want.Got["/b/lock-"].Zxid != 0x101 {
		t.Fatalf("whole stream: %+v", want)
	}
	for cut := 1; cut < len(stream); cut++ {
		got, out := feed(t, stream, []int{cut})
		if !bytes.Equal(out, stream) || !reflect.DeepEqual(got, want) {
			t.Fatalf("cut at %d: %+v, want %+v", cut, got, want)
		}
	}
	ones := make([]int, len(stream))
	for i := range ones {
		ones[i] = 1
	}
	if got, _ := feed(t, stream, ones); !reflect.DeepEqual(got, want) {
		t.Fatalf("one byte per read: %+v, want %+v", got, want)
	}
}

// Whatever the server sends (or a broken stream holds), the parser never
// panics and never changes a byte; a stream cut anywhere records the same
// as the whole. When a frame is not understood nothing is recorded, and
// the client falls back to reading the Stat with a request (the fallback
// TestFallbackWithoutWireReply exercises).
func FuzzWireReplies(f *testing.F) {
	f.Add(replyStream(), uint8(3), uint8(5))
	f.Add(connectReply(0), uint8(1), uint8(1))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 1, 2, 3}, uint8(2), uint8(0))
	f.Add(createReplyFrame(1, 1, string(make([]byte, 3000))), uint8(9), uint8(200))
	f.Fuzz(func(t *testing.T, stream []byte, a, b uint8) {
		whole, out := feed(t, stream, nil)
		if !bytes.Equal(out, stream) {
			t.Fatal("bytes changed")
		}
		split, out := feed(t, stream, []int{int(a), int(b)})
		if !bytes.Equal(out, stream) {
			t.Fatal("bytes changed (split)")
		}
		if !reflect.DeepEqual(whole, split) {
			t.Fatalf("split reads record %+v, one read %+v", split, whole)
		}
	})
}
