package zkconn

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

// notificationFrame is a frame with the notification xid, a zxid, error 0
// and body as the event.
func notificationFrame(body []byte) []byte {
	p := binary.BigEndian.AppendUint32(nil, uint32(0xffffffff)) // xid -1
	p = binary.BigEndian.AppendUint64(p, 7)
	p = binary.BigEndian.AppendUint32(p, 0)
	return frame(append(p, body...))
}

// A frame the layer looks at and does not understand changes nothing: its
// bytes reach go-zookeeper unchanged, nothing is recorded from it, and it
// is reported (Unread, and a debug line). Frames it understands are not
// reported.
func TestFramesNotUnderstood(t *testing.T) {
	longPath := "/a/" + strings.Repeat("x", maxHead) + "lock-0000000001"
	badLength := createReplyFrame(1, 0x100, "/a/_c_x-lock-0000000001")
	binary.BigEndian.PutUint32(badLength[20:24], 1<<20) // a path past its frame
	tests := []struct {
		name   string
		frame  []byte
		unread int64
		taken  bool // the create reply was recorded
	}{
		{"create reply", createReplyFrame(1, 0x100, "/a/_c_x-lock-0000000001"), 0, true},
		{"notification", notificationFrame(append(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 3), 3), "\x00\x00\x00\x02/a"...)), 0, false},
		{"notification whose event does not parse", notificationFrame([]byte{1, 2, 3}), 1, false},
		{"notification shorter than a reply header", frame(binary.BigEndian.AppendUint32(nil, uint32(0xffffffff))), 1, false},
		{"create reply whose path is past its frame", badLength, 1, false},
		{"create reply whose path is past the bytes kept", createReplyFrame(1, 0x100, longPath), 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewWire(Config{})
			w.Expect("/a/lock-")
			in := append(connectReply(6000), tt.frame...)
			c := &Conn{Conn: &chunkConn{data: append([]byte(nil), in...)}, w: w}
			for _, req := range [][]byte{connectRequestFrame(), createRequestFrame(1, "/a/lock-")} {
				if _, err := c.Write(req); err != nil {
					t.Fatal(err)
				}
			}
			var out []byte
			buf := make([]byte, 7)
			for {
				n, err := c.Read(buf)
				if n == 0 || err != nil {
					break
				}
				out = append(out, buf[:n]...)
			}
			if !bytes.Equal(out, in) {
				t.Fatalf("the bytes handed on differ from the server's:\n got %x\nwant %x", out, in)
			}
			if got := w.Unread(); got != tt.unread {
				t.Fatalf("Unread() = %d, want %d", got, tt.unread)
			}
			if _, taken := w.Take("/a/lock-"); taken != tt.taken {
				t.Fatalf("create reply taken %v, want %v", taken, tt.taken)
			}
		})
	}
}
