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
		c.failWaiters()
	}
	for b := p[:n]; len(b) > 0; {
		if c.left == 0 {
			k := copy(c.lenBuf[c.lenN:], b)
			c.lenN += k
			b = b[k:]
			if c.lenN == 4 {
				c.lenN = 0
				c.left = int(int32(binary.BigEndian.Uint32(c.lenBuf[:])))
				c.head = c.head[:0]
				if c.left <= 0 {
					c.left = 0
					c.replies++
				}
			}
			continue
		}
		k := min(len(b), c.left)
		if keep := min(k, maxHead-len(c.head)); keep > 0 {
			c.head = append(c.head, b[:keep]...)
		}
		c.left -= k
		b = b[k:]
		if c.left == 0 {
			c.reply(c.head)
			c.replies++
		}
	}
	return n, err
}

// read reads from the socket for Read. After the connect response it
// reads each frame's length and xid before handing the frame on (as many
// reads as go-zookeeper's own: it reads the length, then the rest):
//   - Until go-zookeeper has set the session's watches again on this
//     connection (watchesSet), the reply to a request (xid >= 0) is held
//     back until then, or watchResetWait: go-zookeeper's receive loop
//     writes its last zxid for every such reply while its loop goroutine
//     reads it, unsynchronised, building the setWatches request
//     (go-zookeeper/zk#35; see the package doc). Notifications, pings and
//     the credentials' replies pass.
//   - On a connection with nothing to set again, once a reply that gives
//     go-zookeeper a watch has passed, later replies wait the same way
//     for the rest of the settle window (settleLeft).
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
	if c.left > 0 || c.lenN > 0 {
		// Within a frame: read no further than its end, so that the
		// next read starts at a frame's start.
		if c.left > 0 && len(p) > c.left {
			p = p[:c.left]
		} else if c.lenN > 0 && len(p) > 4-c.lenN {
			p = p[:4-c.lenN]
		}
		return c.source().Read(p)
	}
	if c.replies == 0 {
		// The connect response: its length first.
		if len(p) > 4 {
			p = p[:4]
		}
		return c.source().Read(p)
	}
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
				return 0, err
			}
			// Hand on what came: the bytes pass unchanged, and the
			// next read meets the error again.
			c.pend = append(c.pend, hdr[:have]...)
			break
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
			payload := make([]byte, n)
			copy(payload, hdr[4:8])
			if k, err := readFull(c.source(), payload[4:]); err != nil {
				c.pend = append(append(c.pend, hdr[0:4]...), payload[:4+k]...)
				break
			}
			if c.consume(payload) {
				have = 0
				continue
			}
			c.pend = append(append(c.pend, hdr[0:4]...), payload...)
			break
		}
		if xid >= 0 {
			if !c.gateClosed() {
				c.awaitWatchesSet()
			} else if d := c.settleLeft(); d > 0 {
				c.awaitSettled(d)
			}
		}
		c.pend = append(c.pend, hdr[:]...)
		break
	}
	n := copy(p, c.pend)
	c.pend = c.pend[n:]
	return n, nil
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
		c.w.notUnderstood("shorter than a reply header", payload)
		return false
	}
	if isOwnXid(xid) {
		if at, ok := c.answered(xid); ok {
			c.w.ack(at)
		}
		c.sentMu.Lock()
		r, ok := c.waiters[xid]
		delete(c.waiters, xid)
		c.sentMu.Unlock()
		if ok {
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
		c.w.notUnderstood("a notification whose event does not parse", payload)
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
