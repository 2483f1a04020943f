package zkconn

import (
	"bufio"
	"encoding/binary"
	"io"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/internal/zkwire"
)

// Read sees the replies, in whatever pieces they arrive.
func (c *Conn) Read(p []byte) (int, error) {
	n, err := c.read(p)
	if err != nil {
		c.ledger.failWaiters()
	}
	c.replies.scan(p[:n], c.reply)
	return n, err
}

// replyFrames reassembles the frames handed on to go-zookeeper from the
// pieces Read returns, keeping each one's first maxHead bytes to be
// looked at.
type replyFrames struct {
	lenBuf [4]byte
	lenN   int // bytes of lenBuf read
	left   int // bytes of the current frame still to come
	head   []byte
	n      int // frames read so far
}

// scan takes b, the next bytes of the stream, and calls done with the
// head of each frame it ends (before counting it).
func (f *replyFrames) scan(b []byte, done func(head []byte)) {
	for len(b) > 0 {
		if f.left == 0 {
			k := copy(f.lenBuf[f.lenN:], b)
			f.lenN += k
			b = b[k:]
			if f.lenN == 4 {
				f.lenN = 0
				f.left = int(int32(binary.BigEndian.Uint32(f.lenBuf[:])))
				f.head = f.head[:0]
				if f.left <= 0 {
					f.left = 0
					f.n++
				}
			}
			continue
		}
		k := min(len(b), f.left)
		if keep := min(k, maxHead-len(f.head)); keep > 0 {
			f.head = append(f.head, b[:keep]...)
		}
		f.left -= k
		b = b[k:]
		if f.left == 0 {
			done(f.head)
			f.n++
		}
	}
}

// within returns p cut to what is left of the frame being read (its
// length, or its body), and whether a frame is being read.
func (f *replyFrames) within(p []byte) ([]byte, bool) {
	switch {
	case f.left > 0:
		return p[:min(len(p), f.left)], true
	case f.lenN > 0:
		return p[:min(len(p), 4-f.lenN)], true
	}
	return p, false
}

// read reads from the socket for Read. After the connect response it
// reads each frame's length and xid before handing the frame on (as many
// reads as go-zookeeper's own: it reads the length, then the rest):
//   - Until go-zookeeper has set the session's watches again on this
//     connection (the gate), the reply to a request (xid >= 0) is held
//     back until then, or resetWait: go-zookeeper's receive loop writes
//     its last zxid for every such reply while its loop goroutine reads
//     it, unsynchronised, building the setWatches request
//     (go-zookeeper/zk#35; see the package doc). Notifications, pings and
//     the credentials' replies pass.
//   - The replies to the client's own requests (injected between
//     go-zookeeper's, see inject), and the notifications only persistent
//     watches asked for, are read whole and consumed (see consume): they
//     never reach go-zookeeper.
func (c *Conn) read(p []byte) (int, error) {
	if len(c.pend) > 0 {
		n := copy(p, c.pend)
		c.pend = c.pend[n:]
		return n, nil
	}
	if q, ok := c.replies.within(p); ok {
		// Within a frame: read no further than its end, so that the
		// next read starts at a frame's start.
		return c.source().Read(q)
	}
	if c.replies.n == 0 {
		// The connect response: its length first.
		return c.source().Read(p[:min(len(p), 4)])
	}
	if err := c.readAhead(); err != nil {
		return 0, err
	}
	n := copy(p, c.pend)
	c.pend = c.pend[n:]
	return n, nil
}

// readAhead reads the next frame's length and xid into pend, having
// consumed the frames that never reach go-zookeeper, and held back a
// reply until the gate opens. It returns an error only if nothing came.
func (c *Conn) readAhead() error {
	c.pend = c.pend[:0]
	var (
		hdr  [8]byte
		have int // bytes of hdr read: a frame shorter than an xid leaves the next one's
	)
	for {
		k, err := readFull(c.source(), hdr[have:])
		have += k
		if err != nil {
			if have == 0 && len(c.pend) == 0 {
				return err
			}
			// Hand on what came: the bytes pass unchanged, and the
			// next read meets the error again.
			c.pend = append(c.pend, hdr[:have]...)
			return nil
		}
		n := int(int32(binary.BigEndian.Uint32(hdr[0:4])))
		if n < 4 {
			// No xid (not ZooKeeper's, which always sends a header):
			// it passes, and the next frame starts within hdr.
			end := 4 + max(n, 0)
			c.pend = append(c.pend, hdr[:end]...)
			have = copy(hdr[:], hdr[end:have])
			continue
		}
		xid := int32(binary.BigEndian.Uint32(hdr[4:8]))
		if (isOwnXid(xid) || xid == notificationXid) && n <= maxInspected {
			if c.takeWhole(hdr, n) {
				have = 0
				continue
			}
			return nil
		}
		if xid >= 0 && !c.gate.passed() {
			c.awaitWatchesSet()
		}
		c.pend = append(c.pend, hdr[:]...)
		return nil
	}
}

// takeWhole reads the rest of a frame of n bytes whose length and xid are
// hdr, and reports whether it was consumed (see consume); if not, the
// whole frame, or what came of it, is put in pend to be handed on.
func (c *Conn) takeWhole(hdr [8]byte, n int) (consumed bool) {
	payload := make([]byte, n)
	copy(payload, hdr[4:8])
	if k, err := readFull(c.source(), payload[4:]); err != nil {
		c.pend = append(append(c.pend, hdr[0:4]...), payload[:4+k]...)
		return false
	}
	if c.consume(payload) {
		return true
	}
	c.pend = append(append(c.pend, hdr[0:4]...), payload...)
	return false
}

// readFull is io.ReadFull that gives up on a read of nothing (which a
// net.Conn never returns, but a test's scripted one does at its end).
// source is what the connection's bytes are read from.
func (c *Conn) source() *bufio.Reader {
	if c.in == nil {
		c.in = bufio.NewReaderSize(c.Conn, 32<<10)
	}
	return c.in
}

func readFull(r io.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		k, err := r.Read(b[n:])
		n += k
		if err != nil {
			return n, err
		}
		if k == 0 {
			return n, io.ErrNoProgress
		}
	}
	return n, nil
}

// maxInspected bounds the frames read whole to be looked at: a
// notification (a path) or a reply to one of the client's own requests
// (a header). A longer one passes unread.
const maxInspected = 64 << 10

// consume looks at a whole frame's payload (xid first) taken off the
// socket by read, and reports whether it is consumed here rather than
// handed on to go-zookeeper: the reply to a request of the client's own,
// or a notification the persistent watches took and go-zookeeper's
// one-shot watches do not need.
func (c *Conn) consume(payload []byte) bool {
	xid, zxid, code, ok := zkwire.ReplyHeader(payload)
	if !ok {
		c.w.notUnderstood("a frame shorter than a reply header", payload)
		return false
	}
	if isOwnXid(xid) {
		if at, ok := c.ledger.answered(xid); ok {
			c.w.ack(at)
		}
		if r, ok := c.ledger.waiter(xid); ok {
			if code == zkwire.ErrUnimplemented && c.w.pw != nil {
				c.w.pw.unimplemented(c, r.op)
			}
			if r.then != nil {
				r.then(code, zxid)
			}
			r.reply <- code
			close(r.reply)
		}
		return true
	}
	ev, err := zkwire.ParseWatcherEvent(payload[zkwire.ReplyHeaderLen:])
	if err != nil {
		c.w.notUnderstood("a notification whose event is not understood", payload)
		return false
	}
	if c.w.pw.active() && c.w.pw.notify(c, ev, zxid) {
		return true
	}
	if c.w.counts != nil {
		c.w.counts.fired(zk.Event{Type: zk.EventType(ev.Type), Path: ev.Path})
	}
	return false
}
