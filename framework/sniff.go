package framework

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/internal/clock"
	"github.com/gocurator/curator/internal/zkwire"
)

// The client wraps every connection it dials so that three things go-zookeeper
// keeps to itself can be read off the wire as the frames pass by:
//   - the session timeout the server negotiated (client-side expiry needs
//     it), from the connect response;
//   - when the server last heard from us, as far as we can prove it: the
//     send time of the last request a reply came back for (client-side
//     expiry counts from it; see sessionDeadline);
//   - the zxid of the transaction that created a node (its czxid), from the
//     reply header of a create the client asked about (StoringStatIn), so a
//     lock learns its fencing token without an extra request.
//
// Frames are [int32 length][payload]. A request's payload starts with
// [int32 xid][int32 opcode], a create's body with [int32 len][path]; a
// reply's with [int32 xid][int64 zxid][int32 err], a create's body with the
// created path. Reading them never changes a byte that passes; if a frame is
// not understood, nothing is recorded and the caller falls back to reading
// the Stat with a request.

// wire is what the frames of one go-zookeeper connection told us.
type wire struct {
	handshake time.Duration // longest wait for a connect response, 0: go-zookeeper's
	clock     clock.Clock   // times the sends (the expiry's clock; see sessionDeadline)
	// hasWatches, if set, says whether go-zookeeper may have watches to
	// set again on a new connection (see watchreset.go).
	hasWatches func() bool
	// pw, if set, is the client's registry of persistent watches, which
	// this wire arms on each connection and feeds with their events
	// (persistent.go).
	pw *persistentWatches
	// fired, if set, is told of every notification handed to
	// go-zookeeper, as it is handed on: the watch counts forget the
	// one-shot watches it fires in step with go-zookeeper's map (counted
	// later, on the event goroutine, a watch set just after the event
	// could be forgotten in its place).
	fired func(zk.Event)
	// retired is set once the client replaced this connection: the
	// persistent watches are armed on the new one only.
	retired   atomic.Bool
	timeoutMs int64     // negotiated session timeout, 0 until known
	lastAck   time.Time // send time of the last acknowledged request, zero until one
	lastPing  time.Time // send time of the last ping of the client's own (keepalive.go)
	// gone is closed once the connection is abandoned: the host
	// provider's pause between redials ends then (hostprovider.go).
	gone chan struct{}

	mu        sync.Mutex
	live      *wireConn              // the socket in use, nil between connections
	abandoned bool                   // the connection was closed: dial no more
	quitting  bool                   // gone is closed (quit or abandon)
	want      map[string]wanted      // creates to watch, by request path
	pending   map[int32]string       // xid -> request path, in flight
	got       map[string]createReply // request path -> reply
	// dialErrs is the last error of a dial to each server that failed,
	// in the order the servers were first tried (see dialErrors).
	dialErrs []serverDialError
}

type serverDialError struct {
	addr string
	err  error
}

type createReply struct {
	zxid    int64
	session int64
	path    string // as the server created it
}

const (
	wireOpCreate2    = zkwire.OpCreate2
	wireOpSetWatches = zkwire.OpSetWatches
	// maxHead is how much of a reply is kept to be read: the header and
	// a created path of any sensible length.
	maxHead = 16 + 4 + 1024
)

func newWire(handshake time.Duration, clk clock.Clock) *wire {
	return &wire{handshake: handshake, clock: clk, gone: make(chan struct{}), want: map[string]wanted{}, pending: map[int32]string{}, got: map[string]createReply{}}
}

// handshakeTimeout is how long a connection may wait for the server's
// answer to its connect request: a third of the session timeout (the ping
// interval), at least a second. go-zookeeper waits ten times its receive
// timeout (6.7 times the session timeout) there, so a server that accepted
// the connection and then said nothing (one still starting, or hung) held
// a reconnecting client past its own client-side expiry; the Java client
// gives up on a silent server after sessionTimeout/servers and tries the
// next.
func handshakeTimeout(session time.Duration) time.Duration {
	return max(session/3, time.Second)
}

func (w *wire) timeout() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.timeoutMs
}

// acked returns the send time of the last request of ours that a server
// answered: the server heard from us then or later, so it cannot expire the
// session before that time plus the session timeout. Zero until one.
func (w *wire) acked() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastAck
}

// ack records that a request sent at t was answered.
func (w *wire) ack(t time.Time) {
	w.mu.Lock()
	if t.After(w.lastAck) {
		w.lastAck = t
	}
	w.mu.Unlock()
}

// expect asks for the reply to a create of path (a server path). The
// channel returned is closed once the create request has been written: a
// request sent after that is answered after the create (ZooKeeper answers
// a session's requests in order).
func (w *wire) expect(path string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := w.want[path]
	if !ok {
		e = wanted{path: path, sent: make(chan struct{})}
		w.want[path] = e
	}
	return e.sent
}

// wanted is a create whose reply we want to read.
type wanted struct {
	path string        // the request path (the map's key)
	sent chan struct{} // closed once the request is written
}

// recordOps makes every connection keep the opcodes it writes (wireConn.ops),
// for tests of what is sent in which order.
var recordOps atomic.Bool

// watchesSet returns the live connection's setWatches signal (see
// wireConn.watchesSet), nil between connections.
func (w *wire) watchesSet() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.live == nil {
		return nil
	}
	return w.live.watchesSet
}

// giveUpWatchesSet opens the live connection's setWatches signal without
// the request: a count that said watches were set was wrong.
func (w *wire) giveUpWatchesSet() {
	w.mu.Lock()
	live := w.live
	w.mu.Unlock()
	if live == nil {
		return
	}
	live.sentMu.Lock()
	defer live.sentMu.Unlock()
	if !live.setSeen && live.watchesSet != nil {
		live.setSeen = true
		close(live.watchesSet)
	}
}

// take returns the reply to a create of path, if seen, and forgets it.
func (w *wire) take(path string) (createReply, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.got[path]
	delete(w.got, path)
	delete(w.want, path)
	if wireRepliesIgnored.Load() {
		return createReply{}, false
	}
	return r, ok
}

// wireRepliesIgnored makes take find nothing, as when a frame was not
// understood: a test's way to run the fallback (the Stat read with a
// request) against a real server.
var wireRepliesIgnored atomic.Bool

// dialer wraps d so that the frames of its connections are read into w.
func (w *wire) dialer(d zk.Dialer) zk.Dialer {
	return func(network, addr string, timeout time.Duration) (net.Conn, error) {
		conn, err := d(network, addr, timeout)
		if err != nil {
			w.dialFailed(addr, err)
			return nil, err
		}
		wc := &wireConn{Conn: conn, w: w, watchesSet: make(chan struct{}), addr: addr}
		wc.dialAgain = func() (net.Conn, error) { return d(network, addr, timeout) }
		if w.pw != nil && !w.retired.Load() {
			// The server's version decides whether persistent watches
			// can be armed on it: asked before the connect request, so
			// the re-arm at the connect response knows.
			w.pw.dialed(wc)
		}
		if w.hasWatches == nil || !w.hasWatches() {
			// No watch to set again: no setWatches to wait for.
			wc.setSeen = true
			close(wc.watchesSet)
		}
		w.mu.Lock()
		clear(w.pending) // requests of an earlier connection get no reply
		if w.abandoned {
			w.mu.Unlock()
			conn.Close()
			return nil, net.ErrClosed
		}
		w.live = wc
		w.mu.Unlock()
		return wc, nil
	}
}

// dialFailed records err as the last dial error of the server addr. Dials
// after abandon fail with net.ErrClosed of the wire's own making and are
// not recorded.
func (w *wire) dialFailed(addr string, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.abandoned {
		return
	}
	for i := range w.dialErrs {
		if w.dialErrs[i].addr == addr {
			w.dialErrs[i].err = err
			return
		}
	}
	w.dialErrs = append(w.dialErrs, serverDialError{addr, err})
}

// dialErrors returns the last dial error of each server whose dial failed,
// nil if none did: Connect's error carries it, so that why no session was
// made (connection refused, no route, a TLS handshake) reaches the caller
// rather than only a debug log. The result unwraps to each error, so
// errors.Is(err, syscall.ECONNREFUSED) works.
func (w *wire) dialErrors() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.dialErrs) == 0 {
		return nil
	}
	return dialErrors(slices.Clone(w.dialErrs))
}

// dialErrors is the last dial error of each server tried, in order.
type dialErrors []serverDialError

func (e dialErrors) Error() string {
	var b strings.Builder
	for i, d := range e {
		if i > 0 {
			b.WriteString("; ")
		}
		msg := d.err.Error()
		if !strings.Contains(msg, d.addr) {
			// A custom dialer's error may not name the server.
			b.WriteString("dial " + d.addr + ": ")
		}
		b.WriteString(msg)
	}
	return b.String()
}

func (e dialErrors) Unwrap() []error {
	errs := make([]error, len(e))
	for i, d := range e {
		errs[i] = d.err
	}
	return errs
}

// abandon closes the connection's socket, if any, and refuses new ones:
// go-zookeeper's goroutines blocked reading a silent socket (it waits up
// to ten times the receive timeout for a connect response, minutes with a
// long session) end at once instead of when their read deadline passes.
func (w *wire) abandon() {
	w.mu.Lock()
	w.quitLocked()
	w.abandoned = true
	live := w.live
	w.live = nil
	w.mu.Unlock()
	if live != nil {
		live.Conn.Close()
	}
}

// quit tells the host provider that the connection is being closed, so
// that go-zookeeper, if it is between connections, stops redialling and
// sees its Close at the next round (hostprovider.go) instead of dialling
// at once, perhaps resuming a session the client has given up (after a
// client-side expiry the server may still hold it). A live socket stays
// open: Close may still send its close request on it.
func (w *wire) quit() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.quitLocked()
}

func (w *wire) quitLocked() {
	if !w.quitting {
		w.quitting = true
		close(w.gone)
	}
}

// Close closes the socket and forgets it.
func (c *wireConn) Close() error {
	c.w.mu.Lock()
	if c.w.live == c {
		c.w.live = nil
	}
	c.w.mu.Unlock()
	err := c.Conn.Close()
	c.failWaiters()
	return err
}

type wireConn struct {
	net.Conn
	w *wire
	// watchesSet is closed once go-zookeeper writes a setWatches request
	// on this connection (see watchreset.go).
	watchesSet chan struct{}
	setSeen    bool
	ops        []int32 // opcodes written, in order, while recordOps is on (tests)
	addr       string  // the server's address, as dialled
	// dialAgain dials the same server (for srvr, see persistent.go).
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

// sentRequest is a request on its way: its xid and when it was written.
// The connect request has no xid; connectXid stands for it.
type sentRequest struct {
	xid int32
	at  time.Time
}

// connectXid marks the connect request in wireConn.sent; ZooKeeper's own
// special xids are small negatives (-1 notification, -2 ping, -4 auth,
// -8 set watches).
const connectXid = -1 << 31

// notificationXid is the xid of a watch notification: a frame the server
// pushes on its own, which acknowledges nothing of ours.
const notificationXid = -1

// SetReadDeadline shortens the deadline go-zookeeper sets for the connect
// response to w.handshake; later deadlines pass unchanged. Reads of one
// connection happen on one goroutine at a time (the handshake on
// go-zookeeper's connection loop, then its receive loop), as this does.
func (c *wireConn) SetReadDeadline(t time.Time) error {
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
func (c *wireConn) Write(p []byte) (int, error) {
	if c.wrote && c.w.pw != nil && len(p) >= 12 && int32(binary.BigEndian.Uint32(p[8:12])) == wireOpSetWatches {
		// The registry's lock is held across the filter and the write,
		// so a persistent watch added meanwhile is written after this
		// request, and the two never name one path (persistent.go).
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
func (c *wireConn) SetWriteDeadline(t time.Time) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.zkDeadline = t
	return c.Conn.SetWriteDeadline(t)
}

// injectWriteTimeout bounds the write of an injected request.
const injectWriteTimeout = 10 * time.Second

// ownXidBase starts the range of xids of the client's own requests:
// [ownXidBase-ownXidSpan+1, ownXidBase], negative and far from the
// special xids (-1, -2, -4, -8), where go-zookeeper (positive xids and
// -2) never goes.
const (
	ownXidBase = -0x10000000
	ownXidSpan = 0x40000000
)

func isOwnXid(xid int32) bool { return xid <= ownXidBase && xid > ownXidBase-ownXidSpan }

// ownRequest is an injected request waiting for its reply.
type ownRequest struct {
	op    int32
	reply chan int32 // the reply's error code; closed without one if the connection ends
	then  func(code int32, zxid int64)
}

// inject writes frame, a whole request of the client's own with xid and
// opcode op, between go-zookeeper's frames, and returns the channel its
// reply's error code comes on (closed without a value if the connection
// ends first). The reply never reaches go-zookeeper. A failed write
// closes the socket: part of a frame may have gone out.
//
// then, if set, is called with the reply's error code and zxid on the receive
// goroutine as the reply is read (not if the connection ends first); it
// must not block.
func (c *wireConn) inject(xid, op int32, frame []byte, then func(code int32, zxid int64)) (<-chan int32, error) {
	ch := make(chan int32, 1)
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.sentMu.Lock()
	if c.waiters == nil {
		c.waiters = map[int32]ownRequest{}
	}
	c.waiters[xid] = ownRequest{op: op, reply: ch, then: then}
	c.sent = append(c.sent, sentRequest{xid: xid, at: c.w.clock.Now()})
	if recordOps.Load() {
		c.ops = append(c.ops, op)
	}
	c.sentMu.Unlock()
	_ = c.Conn.SetWriteDeadline(time.Now().Add(injectWriteTimeout))
	_, err := c.Conn.Write(frame)
	_ = c.Conn.SetWriteDeadline(c.zkDeadline)
	if err != nil {
		c.Conn.Close()
		c.failWaiters()
		return nil, err
	}
	return ch, nil
}

// failWaiters ends the wait of every injected request: its reply is not
// coming.
func (c *wireConn) failWaiters() {
	c.sentMu.Lock()
	defer c.sentMu.Unlock()
	for xid, r := range c.waiters {
		close(r.reply)
		delete(c.waiters, xid)
	}
}

func (c *wireConn) write(p []byte) (int, error) {
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
			c.sentMu.Unlock()
		}
		c.request(p)
		if len(p) >= 8 {
			c.sentMu.Lock()
			c.sent = append(c.sent, sentRequest{xid: int32(binary.BigEndian.Uint32(p[4:8])), at: now})
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
// are not coming), and returns its send time.
func (c *wireConn) answered(xid int32) (time.Time, bool) {
	c.sentMu.Lock()
	defer c.sentMu.Unlock()
	for i, r := range c.sent {
		if r.xid == xid {
			// Drop it and those before it, keeping the array.
			n := copy(c.sent, c.sent[i+1:])
			c.sent = c.sent[:n]
			return r.at, true
		}
	}
	return time.Time{}, false // not ours, or not understood: prove nothing
}

func (c *wireConn) request(p []byte) {
	if len(p) < 16 {
		return
	}
	switch int32(binary.BigEndian.Uint32(p[8:12])) {
	case zkwire.OpCreate, zkwire.OpCreate2, zkwire.OpCreateContainer, zkwire.OpCreateTTL:
	default:
		return
	}
	n := int(binary.BigEndian.Uint32(p[12:16]))
	if n < 0 || 16+n > len(p) {
		return
	}
	c.w.mu.Lock()
	// The lookup with string(bytes) does not allocate; the path stored is
	// the map's own key.
	if e, ok := c.w.want[string(p[16:16+n])]; ok {
		select {
		case <-e.sent:
		default:
			close(e.sent)
		}
		c.w.pending[int32(binary.BigEndian.Uint32(p[4:8]))] = e.path
	}
	c.w.mu.Unlock()
}

// Read sees the replies, in whatever pieces they arrive.
func (c *wireConn) Read(p []byte) (int, error) {
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
//     (go-zookeeper/zk#35; see watchreset.go). Notifications, pings and
//     the credentials' replies pass.
//   - The replies to the client's own requests (injected between
//     go-zookeeper's, see inject), and the notifications only persistent
//     watches asked for, are read whole and consumed (see consume): they
//     never reach go-zookeeper.
func (c *wireConn) read(p []byte) (int, error) {
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
		if xid >= 0 && !c.gateClosed() {
			c.awaitWatchesSet()
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
func (c *wireConn) source() *bufio.Reader {
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
func (c *wireConn) consume(payload []byte) bool {
	xid, zxid, code, ok := zkwire.ReplyHeader(payload)
	if !ok {
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
		return false
	}
	if c.w.pw.active() && c.w.pw.notify(c, ev, zxid) {
		return true
	}
	if c.w.fired != nil {
		c.w.fired(zk.Event{Type: zk.EventType(ev.Type), Path: ev.Path})
	}
	return false
}

// gateClosed reports whether the connection's watches are set again (or
// need not be).
func (c *wireConn) gateClosed() bool {
	if c.watchesSet == nil {
		return true // a connection made without one waits for nothing
	}
	select {
	case <-c.watchesSet:
		return true
	default:
		return false
	}
}

// awaitWatchesSet waits for watchesSet, at most watchResetWait.
func (c *wireConn) awaitWatchesSet() {
	t := time.NewTimer(watchResetWait)
	defer t.Stop()
	select {
	case <-c.watchesSet:
	case <-t.C:
		c.sentMu.Lock()
		if !c.setSeen && c.watchesSet != nil {
			c.setSeen = true
			close(c.watchesSet)
		}
		c.sentMu.Unlock()
	}
	if recordOps.Load() {
		c.sentMu.Lock()
		c.ops = append(c.ops, opReplyReleased)
		c.sentMu.Unlock()
	}
}

// opReplyReleased marks, in wireConn.ops, a reply held back until the
// watches were set again and then handed on.
const opReplyReleased = -1000

// opReplyEarly marks, in wireConn.ops, a reply to a request handed on
// before go-zookeeper set the watches again: what read prevents.
const opReplyEarly = -1001

func (c *wireConn) reply(h []byte) {
	if c.replies == 0 { // connect response: version, timeout, session, ...
		at, sent := c.answered(connectXid)
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
			c.ops = append(c.ops, opReplyEarly)
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
	if binary.BigEndian.Uint32(h[12:16]) != 0 || len(h) < 20 {
		return
	}
	n := int(binary.BigEndian.Uint32(h[16:20]))
	if n < 0 || 20+n > len(h) {
		return
	}
	c.w.got[path] = createReply{
		zxid:    int64(binary.BigEndian.Uint64(h[4:12])),
		session: c.session,
		path:    string(h[20 : 20+n]),
	}
}
