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
// go-zookeeper uses it as one.
type Conn struct {
	net.Conn
	w *Wire
	// watchesSet is closed once go-zookeeper writes a setWatches request
	// on this connection (see gate.go).
	watchesSet chan struct{}
	setSeen    bool
	// setWritten is closed once go-zookeeper writes a setWatches request
	// (setWrote, under sentMu, says so without a select); zkWatched is
	// set once a reply to a request that sets one of go-zookeeper's
	// watches has been handed on, and connectedAt is when the connect
	// response came: together they bound the settle window (gate.go).
	setWritten  chan struct{}
	setWrote    bool
	zkWatched   bool
	connectedAt time.Time
	ops         []int32 // opcodes written, in order, while recordOps is on (tests)
	addr        string  // the server's address, as dialled
	// dialAgain dials the same server (for srvr, see version.go).
	dialAgain func() (net.Conn, error)
	caps      atomic.Int32 // capUnknown, capYes, capNo: persistent watches
	// established is set once the server's connect response gave the
	// connection a session: requests of the client's own (pings) may go
	// out from then on, never before the connect request is answered.
	established atomic.Bool

	// Writes of go-zookeeper's frames and of the client's own (injected
	// between them: AddWatch, SetWatches2, RemoveWatches) take writeMu, so
	// frames never interleave; zkDeadline is go-zookeeper's write deadline,
	// put back after an injected write.
	writeMu    sync.Mutex
	zkDeadline time.Time
	// Injected requests, by xid, until their replies come (under sentMu).
	waiters map[int32]ownRequest
	pend    []byte // bytes read ahead (a frame's length and xid), not yet handed on
	wrote   bool   // the connect request is out
	session int64  // from the connect response

	// Requests written and not yet answered, in order (ZooKeeper answers a
	// session's requests in the order they were sent). Write and Read run
	// on go-zookeeper's send and receive goroutines.
	sentMu sync.Mutex
	sent   []sentRequest

	// in buffers the socket's reads: go-zookeeper reads a reply's length
	// and body apart, and this reads its xid ahead, so that unbuffered a
	// reply took three system calls; pipelined replies now come in one.
	// Made at the first read (reads happen on one goroutine at a time).
	in *bufio.Reader

	// reply reassembly
	lenBuf  [4]byte
	lenN    int
	left    int // bytes of the current frame still to come
	head    []byte
	replies int // frames read so far
}

const (
	wireOpCreate2    = zkwire.OpCreate2
	wireOpSetWatches = zkwire.OpSetWatches
	// maxHead is how much of a reply is kept to be read: the header and
	// a created path of any sensible length.
	maxHead = 16 + 4 + 1024
)

// sentRequest is a request on its way: its xid and when it was written.
// The connect request has no xid; connectXid stands for it.
type sentRequest struct {
	xid   int32
	at    time.Time
	watch bool // a read that sets one of go-zookeeper's watches
}

// connectXid marks the connect request in Conn.sent; ZooKeeper's own
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
	c.failWaiters()
	return err
}

// SetReadDeadline shortens the deadline go-zookeeper sets for the connect
// response to w.handshake; later deadlines pass unchanged. Reads of one
// connection happen on one goroutine at a time (the handshake on
// go-zookeeper's connection loop, then its receive loop), as this does.
func (c *Conn) SetReadDeadline(t time.Time) error {
	if c.replies == 0 && c.w.handshake > 0 && !t.IsZero() {
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
	if c.wrote && c.w.pw != nil && len(p) >= 12 && int32(binary.BigEndian.Uint32(p[8:12])) == wireOpSetWatches {
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
	if c.wrote {
		if recordOps.Load() && len(p) >= 12 {
			c.sentMu.Lock()
			c.ops = append(c.ops, int32(binary.BigEndian.Uint32(p[8:12])))
			c.sentMu.Unlock()
		}
		if len(p) >= 12 && int32(binary.BigEndian.Uint32(p[8:12])) == wireOpSetWatches {
			c.sentMu.Lock()
			if !c.setSeen && c.watchesSet != nil {
				c.setSeen = true
				close(c.watchesSet)
			}
			c.wroteSetWatchesLocked()
			c.sentMu.Unlock()
		}
		c.request(p)
		if len(p) >= 8 {
			c.sentMu.Lock()
			c.sent = append(c.sent, sentRequest{xid: int32(binary.BigEndian.Uint32(p[4:8])), at: now, watch: setsWatch(p)})
			c.sentMu.Unlock()
		}
	} else {
		c.sentMu.Lock()
		c.sent = append(c.sent, sentRequest{xid: connectXid, at: now})
		c.sentMu.Unlock()
	}
	c.wrote = true
	return c.Conn.Write(p)
}

// answered takes the request with xid off the list of those in flight,
// with every request sent before it (answered in order, so their replies
// are not coming), and returns its send time. A request that set one of
// go-zookeeper's watches opens the settle window (gate.go).
func (c *Conn) answered(xid int32) (time.Time, bool) {
	c.sentMu.Lock()
	defer c.sentMu.Unlock()
	for i, r := range c.sent {
		if r.xid == xid {
			// Drop it and those before it, keeping the array.
			n := copy(c.sent, c.sent[i+1:])
			c.sent = c.sent[:n]
			if r.watch {
				c.zkWatched = true
			}
			return r.at, true
		}
	}
	return time.Time{}, false // not ours, or not understood: prove nothing
}

func (c *Conn) reply(h []byte) {
	if c.replies == 0 { // connect response: version, timeout, session, ...
		at, sent := c.answered(connectXid)
		c.sentMu.Lock()
		c.connectedAt = settleClock.Now()
		c.sentMu.Unlock()
		if len(h) >= 16 {
			c.session = int64(binary.BigEndian.Uint64(h[8:16]))
			// A timeout of 0 means the session expired: that
			// acknowledges nothing.
			if ms := int64(int32(binary.BigEndian.Uint32(h[4:8]))); ms > 0 {
				c.w.mu.Lock()
				c.w.timeoutMs = ms
				c.w.mu.Unlock()
				if sent {
					c.w.ack(at)
				}
				if c.session != 0 {
					c.established.Store(true)
				}
				if c.w.pw != nil && c.session != 0 && !c.w.retired.Load() {
					// Before go-zookeeper has the session, so
					// before any request of its own.
					c.w.pw.connected(c, c.session)
				}
			}
		}
		return
	}
	if len(h) < 16 {
		return
	}
	xid := int32(binary.BigEndian.Uint32(h[0:4]))
	if xid >= 0 && recordOps.Load() {
		c.sentMu.Lock()
		if !c.setSeen {
			c.ops = append(c.ops, OpReplyEarly)
		}
		c.sentMu.Unlock()
	}
	if xid != notificationXid {
		if at, ok := c.answered(xid); ok {
			c.w.ack(at)
		}
	}
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	path, ok := c.w.pending[xid]
	if !ok {
		return
	}
	delete(c.w.pending, xid)
	if binary.BigEndian.Uint32(h[12:16]) != 0 {
		return // refused: no node made
	}
	if len(h) < 20 {
		c.w.notUnderstood("a create reply without its path", h)
		return
	}
	n := int(binary.BigEndian.Uint32(h[16:20]))
	if n < 0 || 20+n > len(h) {
		c.w.notUnderstood("a create reply whose path is past the bytes kept or its frame", h)
		return
	}
	c.w.got[path] = CreateReply{
		Zxid:    int64(binary.BigEndian.Uint64(h[4:12])),
		Session: c.session,
		Path:    string(h[20 : 20+n]),
	}
}
