package zktest

import (
	"bufio"
	"io"
	"net"
	"sync"
)

// proxyConn is one client connection through a Proxy and its connection to
// the target. One goroutine reads each direction, frame by frame, and hands
// the frames to that direction's delayLine, which writes them at once or,
// under a delay, from a goroutine of its own when they fall due.
type proxyConn struct {
	p      *Proxy
	client net.Conn
	// held is set for a connection accepted in a black hole: it is never
	// dialled through, only drained until it is closed.
	held bool
	// lost, guarded by p.mu (not mu, so that dropping a frame and Restore
	// cannot interleave), is set once the connection has lost bytes or seen
	// a side end in a black hole: Restore closes it.
	lost bool

	mu     sync.Mutex
	server net.Conn // nil until dialled
	closed bool
	// toServer and toClient carry each direction's bytes to the other
	// side; nil until dialled.
	toServer, toClient *delayLine
	// dropXid and dropped describe the armed lost-reply fault this
	// connection carries: the reply with xid dropXid is dropped and
	// dropped closed. dropped is nil when none is carried.
	dropXid int32
	dropped *lostReply
}

// run dials the target and forwards until either side closes. The caller
// has counted it in p.wg.
func (c *proxyConn) run() {
	defer c.p.wg.Done()
	if c.held {
		c.drain(c.client)
		return
	}
	d := net.Dialer{Timeout: proxyDialTimeout}
	server, err := d.DialContext(c.p.ctx, "tcp", c.p.target)
	if err != nil {
		c.fail()
		return
	}
	toServer, toClient, ok := c.setServer(server)
	if !ok {
		server.Close()
		return
	}
	fromClient := bufio.NewReader(c.client)
	head, err := fromClient.Peek(4)
	if err != nil {
		c.fail()
		return
	}
	c.p.wg.Add(1)
	if !plausibleLength(head) {
		// A four-letter word or something else that is not a session:
		// pass bytes through untouched.
		go c.copyRaw(server, toClient)
		if c.pumpRaw(toServer, fromClient) {
			if tc, ok := server.(*net.TCPConn); ok {
				// Let the server answer after the client's half-close.
				tc.CloseWrite()
				return
			}
		}
		c.fail()
		return
	}
	go c.serverToClient(bufio.NewReader(server), toClient)
	c.clientToServer(fromClient, toServer)
}

// setServer records the dialled connection and makes the lines to both
// sides, unless the proxy connection was closed meanwhile.
func (c *proxyConn) setServer(server net.Conn) (toServer, toClient *delayLine, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, nil, false
	}
	c.server = server
	c.toServer, c.toClient = newDelayLine(c, server), newDelayLine(c, c.client)
	return c.toServer, c.toClient, true
}

// dropping reports whether bytes must be dropped: in a black hole, which
// marks the connection lost, and on a lost connection ever after (Restore
// is about to close it; a stream with a gap must not go on). The check and
// the mark are one step with respect to Restore, so every chunk is either
// forwarded or counted lost.
func (c *proxyConn) dropping() bool {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	if c.p.blackHole {
		c.lost = true
	}
	return c.lost
}

// fail handles a side that ended or failed. Outside a black hole it closes
// both sides, so the other side sees it. In a black hole it closes nothing,
// since the peers must not hear of each other: the connection is marked
// lost, and Restore or Close closes it.
func (c *proxyConn) fail() {
	if c.dropping() {
		return
	}
	c.close()
}

// drain reads and discards r until it fails, then fails the connection.
// Only a held connection drains: it is lost from the start.
func (c *proxyConn) drain(r io.Reader) {
	io.Copy(io.Discard, r)
	c.fail()
}

// pumpRaw copies r to line chunk by chunk, dropping chunks in a black
// hole. When r ends it waits until line has passed on what it holds. It
// reports whether r ended cleanly (io.EOF) with nothing lost to a black
// hole at that moment.
func (c *proxyConn) pumpRaw(line *delayLine, r io.Reader) bool {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 && !c.dropping() {
			if werr := line.send(buf[:n]); werr != nil {
				return false
			}
		}
		if err != nil {
			line.drain()
			return err == io.EOF && !c.dropping()
		}
	}
}

// copyRaw copies the server's bytes to the client until either ends.
func (c *proxyConn) copyRaw(server net.Conn, toClient *delayLine) {
	defer c.p.wg.Done()
	c.pumpRaw(toClient, server)
	c.fail()
}

// clientToServer forwards frames and, for a create while the lost-reply
// fault is armed, takes the fault onto this connection before the request
// can reach the server (so its reply cannot overtake the bookkeeping).
// Frames read in a black hole are dropped. When the client's side ends, the
// frames still on their way are passed on before the server's side closes.
func (c *proxyConn) clientToServer(r *bufio.Reader, toServer *delayLine) {
	defer c.fail()
	var buf []byte
	for first := true; ; first = false {
		frame, err := readFrame(r, buf)
		if err != nil {
			toServer.drain()
			return
		}
		buf = frame
		if c.dropping() {
			continue
		}
		// The first frame is the ConnectRequest, which has no header.
		if xid, op, ok := requestHeader(frame); ok && !first {
			c.carryFault(xid, op)
		}
		if err := toServer.send(frame); err != nil {
			return
		}
	}
}

func (c *proxyConn) carryFault(xid, op int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped != nil || c.closed {
		return
	}
	if f := c.p.takeArmed(op); f != nil {
		c.dropXid, c.dropped = xid, f
	}
}

// serverToClient forwards frames, watch events and pings included, except
// the reply the carried fault drops: then, once the frames before it have
// reached the client, it closes both sides and fires. Frames read in a
// black hole are dropped.
func (c *proxyConn) serverToClient(r *bufio.Reader, toClient *delayLine) {
	defer c.p.wg.Done()
	defer c.fail()
	var buf []byte
	for first := true; ; first = false {
		frame, err := readFrame(r, buf)
		if err != nil {
			toClient.drain()
			return
		}
		buf = frame
		if c.dropping() {
			continue
		}
		// The first frame is the ConnectResponse, which has no header.
		if xid, ok := replyXid(frame); ok && !first {
			if f := c.takeFault(xid); f != nil {
				if f.code != 0 {
					frame = withErrorCode(frame, f.code)
					err := toClient.send(frame)
					toClient.drain()
					close(f.fired)
					if err != nil {
						return
					}
					continue
				}
				toClient.drain()
				c.close()
				close(f.fired)
				return
			}
		}
		if err := toClient.send(frame); err != nil {
			return
		}
	}
}

// takeFault returns the carried fault if xid is the reply it is for, and
// forgets it.
func (c *proxyConn) takeFault(xid int32) *lostReply {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped == nil || xid != c.dropXid {
		return nil
	}
	f := c.dropped
	c.dropped = nil
	return f
}

// close closes both sides once and hands an unfired fault back to the
// proxy.
func (c *proxyConn) close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	server, unfired := c.server, c.dropped
	lines := []*delayLine{c.toServer, c.toClient}
	c.dropped = nil
	c.mu.Unlock()
	for _, l := range lines {
		if l != nil {
			l.close()
		}
	}
	c.client.Close()
	if server != nil {
		server.Close()
	}
	c.p.forget(c, unfired)
}
