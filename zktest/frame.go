package zktest

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/gocurator/curator/internal/zkwire"
)

// maxFrame bounds a frame's length. ZooKeeper's own limit (jute.maxbuffer)
// is about 1 MiB by default; anything past this is not its protocol. Four
// letter words ("ruok" read as a length is about 1.9e9) are told apart by
// it.
const maxFrame = 64 << 20

// opCreate is the opcode of a plain create; the opcodes live in one table,
// internal/zkwire, which the client's wire layer reads too.
const opCreate = zkwire.OpCreate

// isCreate reports whether op creates a single znode: the requests whose
// reply the lost-reply fault drops. multi (14) is not among them.
func isCreate(op int32) bool { return zkwire.IsCreate(op) }

// plausibleLength reports whether the first four bytes a client sends can
// start a ZooKeeper frame (a ConnectRequest) rather than a four-letter word.
func plausibleLength(head []byte) bool {
	n := int32(binary.BigEndian.Uint32(head))
	return n > 0 && n <= maxFrame
}

// readFrame reads one length-prefixed frame and returns it whole, prefix
// included, reusing buf when it is large enough.
func readFrame(r *bufio.Reader, buf []byte) ([]byte, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(head[:]))
	if n < 0 || n > maxFrame {
		return nil, fmt.Errorf("zktest: proxy: frame length %d out of range", n)
	}
	size := 4 + int(n)
	if cap(buf) < size {
		buf = make([]byte, size)
	}
	buf = buf[:size]
	copy(buf, head[:])
	if _, err := io.ReadFull(r, buf[4:]); err != nil {
		return nil, err
	}
	return buf, nil
}

// requestHeader returns the xid and opcode of a client frame after the
// ConnectRequest: [len][xid][opcode]...
func requestHeader(frame []byte) (xid, op int32, ok bool) {
	if len(frame) < 12 {
		return 0, 0, false
	}
	return int32(binary.BigEndian.Uint32(frame[4:8])), int32(binary.BigEndian.Uint32(frame[8:12])), true
}

// replyXid returns the xid of a server frame after the ConnectResponse:
// [len][xid][zxid int64][err]... Watch events have xid -1, pings -2.
func replyXid(frame []byte) (int32, bool) {
	if len(frame) < 8 {
		return 0, false
	}
	return int32(binary.BigEndian.Uint32(frame[4:8])), true
}

// withErrorCode rewrites a reply frame, [len][xid][zxid][err][body], to
// carry error code code and no body, reusing frame's memory.
func withErrorCode(frame []byte, code int32) []byte {
	const header = 4 + 4 + 8 + 4
	if len(frame) < header {
		return frame
	}
	frame = frame[:header]
	binary.BigEndian.PutUint32(frame[0:4], uint32(header-4))
	binary.BigEndian.PutUint32(frame[16:20], uint32(code))
	return frame
}
