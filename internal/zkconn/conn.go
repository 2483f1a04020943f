package zkconn

import (
	"bufio"
	"encoding/binary"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocurator/curator/internal/zkwire"
)

// Conn is one socket go-zookeeper dialled, wrapped: it reads the frames
// as they pass (Read), sees every request go out (Write), and writes the
// client's own requests between go-zookeeper's. It is a net.Conn, and
// go-zookeeper uses it as one. Its parts: the ledger of requests in
// flight, the watch reset gate, and the reply frames being reassembled.
type Conn struct {
	net.Conn
	w    *Wire
	addr string // the server's address, as dialled
	// dialAgain dials the same server (for srvr, see version.go).
	dialAgain func() (net.Conn, error)
	caps      atomic.Int32 // capUnknown, capYes, capNo: persistent watches
	// established is set once the server's connect response gave the
	// connection a session: requests of the client's own (pings) may go
	// out from then on, never before the connect request is answered.
	established atomic.Bool
	session     int64 // from the connect response

	ledger ledger    // requests in flight, and the client's own waiting
	gate   resetGate // go-zookeeper's setWatches written (gate.go)

	// Writes of go-zookeeper's frames and of the client's own (injected
	// between them: AddWatch, SetWatches2, RemoveWatches) take writeMu, so
	// frames never interleave; zkDeadline is go-zookeeper's write deadline,
	// put back after an injected write.
	writeMu    sync.Mutex
	zkDeadline time.Time
	wrote      bool // the connect request is out

	// Reads happen on one goroutine at a time (the handshake on
	// go-zookeeper's connection loop, then its receive loop).
	in      *bufio.Reader // the socket, buffered (read.go); made at the first read
	pend    []byte        // bytes read ahead (a frame's length and xid), not yet handed on
	replies replyFrames   // the frames handed on, reassembled to be looked at
}

// maxHead is how much of a reply is kept to be read: the header and a
// created path of any sensible length.
const maxHead = 16 + 4 + 1024

// connectXid marks the connect request in the ledger; ZooKeeper's own
// special xids are small negatives (-1 notification, -2 ping, -4 auth,
// -8 set watches).
const connectXid = -1 << 31

// notificationXid is the xid of a watch notification: a frame the server
// pushes on its own, which acknowledges nothing of ours.
const notificationXid = -1

// Close closes the socket and forgets it.
func (c *Conn) Close() error {
	c.w.mu.Lock()
	if c.w.live == c {
		c.w.live = nil
	}
	c.w.mu.Unlock()
	err := c.Conn.Close()
	c.ledger.failWaiters()
	return err
}

// SetReadDeadline shortens the deadline go-zookeeper sets for the connect
// response to w.handshake; later deadlines pass unchanged. Reads of one
// connection happen on one goroutine at a time (the handshake on
// go-zookeeper's connection loop, then its receive loop), as this does.
func (c *Conn) SetReadDeadline(t time.Time) error {
	if c.replies.n == 0 && c.w.handshake > 0 && !t.IsZero() {
		if limit := time.Now().Add(c.w.handshake); t.After(limit) {
			t = limit
		}
	}
	return c.Conn.SetReadDeadline(t)
}

// Write sees each request: go-zookeeper writes one whole frame per call.
// The send time is taken before the write, so it never comes after the
// server's receipt of the request.
func (c *Conn) Write(p []byte) (int, error) {
	if c.wrote && c.w.pw != nil && len(p) >= 12 && int32(binary.BigEndian.Uint32(p[8:12])) == zkwire.OpSetWatches {
		// The registry's lock is held across the filter and the write,
		// so a persistent watch added meanwhile is written after this
		// request, and the two never name one path (see the package doc).
		c.w.pw.mu.Lock()
		defer c.w.pw.mu.Unlock()
		q := c.w.pw.filterSetWatchesLocked(p)
		if _, err := c.write(q); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.write(p)
}

// SetWriteDeadline records go-zookeeper's write deadline, which an
// injected write puts back after its own.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.zkDeadline = t
	return c.Conn.SetWriteDeadline(t)
}

func (c *Conn) write(p []byte) (int, error) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	now := c.w.clock.Now()
	switch {
	case !c.wrote:
		c.ledger.written(connectXid, now, 0, nil)
	case len(p) >= 12:
		// Logged before the gate opens: a reply it releases is
		// logged after.
		op := int32(binary.BigEndian.Uint32(p[8:12]))
		c.ledger.note(op)
		if op == zkwire.OpSetWatches {
			c.gate.open()
		}
		c.request(p)
		c.ledger.written(int32(binary.BigEndian.Uint32(p[4:8])), now, 0, nil)
	case len(p) >= 8:
		c.ledger.written(int32(binary.BigEndian.Uint32(p[4:8])), now, 0, nil)
	}
	c.wrote = true
	return c.Conn.Write(p)
}

// reply looks at a frame handed on to go-zookeeper, whole but for a
// long body (up to maxHead bytes): the connect response, or a reply.
func (c *Conn) reply(h []byte) {
	if c.replies.n == 0 {
		c.connectResponse(h)
		return
	}
	if len(h) < 16 {
		return
	}
	xid := int32(binary.BigEndian.Uint32(h[0:4]))
	if xid >= 0 && !c.gate.passed() {
		c.ledger.note(OpReplyEarly)
	}
	if xid != notificationXid {
		if at, ok := c.ledger.answered(xid); ok {
			c.w.ack(at)
		}
	}
	c.createReply(xid, h)
}

// connectResponse reads the connect response (version, timeout, session,
// ...): the negotiated timeout, and the acknowledgement of the connect
// request; on a new connection with a session, the registry's watches
// are armed before go-zookeeper has the session, so before any request
// of its own.
func (c *Conn) connectResponse(h []byte) {
	at, sent := c.ledger.answered(connectXid)
	if len(h) < 16 {
		return
	}
	c.session = int64(binary.BigEndian.Uint64(h[8:16]))
	// A timeout of 0 means the session expired: that acknowledges
	// nothing.
	ms := int64(int32(binary.BigEndian.Uint32(h[4:8])))
	if ms <= 0 {
		return
	}
	c.w.mu.Lock()
	c.w.timeoutMs = ms
	c.w.mu.Unlock()
	if sent {
		c.w.ack(at)
	}
	if c.session == 0 {
		return
	}
	c.established.Store(true)
	if c.w.pw != nil && !c.w.retired.Load() {
		c.w.pw.connected(c, c.session)
	}
}
