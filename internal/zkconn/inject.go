package zkconn

import (
	"encoding/binary"
	"time"

	"github.com/gocurator/curator/internal/zkwire"
)

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
func (c *Conn) inject(xid, op int32, frame []byte, then func(code int32, zxid int64)) (<-chan int32, error) {
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
func (c *Conn) failWaiters() {
	c.sentMu.Lock()
	defer c.sentMu.Unlock()
	for xid, r := range c.waiters {
		close(r.reply)
		delete(c.waiters, xid)
	}
}

// pingXid and opPing are ZooKeeper's: the server answers every ping with
// xid -2, whatever the request carried, so the client's pings use it too.
const (
	pingXid int32 = -2
	opPing  int32 = zkwire.OpPing
)

// pingFrame is a whole ping request: length, xid, opcode.
var pingFrame = func() []byte {
	xid, op := pingXid, opPing
	b := binary.BigEndian.AppendUint32(nil, 8)
	b = binary.BigEndian.AppendUint32(b, uint32(xid))
	return binary.BigEndian.AppendUint32(b, uint32(op))
}()

// Keepalive pings on the live connection if the last answered send and
// the last ping of the client's own are both every old or older at now,
// and returns when it should be asked again: every after the later of
// the two (after now). It blocks only while the ping is written (behind a
// frame go-zookeeper is writing, at most injectWriteTimeout).
func (w *Wire) Keepalive(now time.Time, every time.Duration) time.Time {
	w.mu.Lock()
	live := w.live
	fresh := w.lastAck
	if w.lastPing.After(fresh) {
		fresh = w.lastPing
	}
	w.mu.Unlock()
	if due := fresh.Add(every); now.Before(due) {
		return due
	}
	if live == nil || !live.established.Load() {
		// Between connections: the next session arms the keepalive.
		return now.Add(every)
	}
	at, err := live.ping()
	if err != nil {
		// The socket is closed; go-zookeeper reconnects.
		return now.Add(every)
	}
	w.mu.Lock()
	if at.After(w.lastPing) {
		w.lastPing = at
	}
	w.mu.Unlock()
	return at.Add(every)
}

// ping writes a ping between go-zookeeper's frames and returns its send
// time, taken before the write (so never after the server's receipt). Its
// reply, xid -2 like go-zookeeper's own pings' and answered in order with
// them, goes on to go-zookeeper, which ignores pings' replies; reading it,
// reply records the acknowledgement. A failed write closes the socket:
// part of the frame may have gone out.
func (c *Conn) ping() (time.Time, error) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	at := c.w.clock.Now()
	c.sentMu.Lock()
	c.sent = append(c.sent, sentRequest{xid: pingXid, at: at})
	if recordOps.Load() {
		c.ops = append(c.ops, opPing)
	}
	c.sentMu.Unlock()
	_ = c.Conn.SetWriteDeadline(time.Now().Add(injectWriteTimeout))
	_, err := c.Conn.Write(pingFrame)
	_ = c.Conn.SetWriteDeadline(c.zkDeadline)
	if err != nil {
		c.Conn.Close()
		c.failWaiters()
		return at, err
	}
	return at, nil
}
