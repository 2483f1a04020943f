package zktest

import (
	"bufio"
	"io"
	"net"
	"sync"
)

// proxyConn is one client connection through a Proxy and its connection to
// the target. One goroutine copies each direction, frame by frame.
type proxyConn struct {
	p      *Proxy
	client net.Conn

	mu     sync.Mutex
	server net.Conn // nil until dialled
	closed bool
	// dropXid and dropped describe the armed lost-reply fault this
	// connection carries: the reply with xid dropXid is dropped and
	// dropped closed. dropped is nil when none is carried.
	dropXid int32
	dropped chan struct{}
}

// run dials the target and forwards until either side closes. The caller
// has counted it in p.wg.
func (c *proxyConn) run() {
	defer c.p.wg.Done()
	d := net.Dialer{Timeout: proxyDialTimeout}
	server, err := d.DialContext(c.p.ctx, "tcp", c.p.target)
	if err != nil {
		c.close()
		return
	}
	if !c.setServer(server) {
		server.Close()
		return
	}
	fromClient := bufio.NewReader(c.client)
	head, err := fromClient.Peek(4)
	if err != nil {
		c.close()
		return
	}
	c.p.wg.Add(1)
	if !plausibleLength(head) {
		// A four-letter word or something else that is not a session:
		// pass bytes through untouched.
		go c.copyRaw()
		if _, err := io.Copy(server, fromClient); err == nil {
			if tc, ok := server.(*net.TCPConn); ok {
				// Let the server answer after the client's half-close.
				tc.CloseWrite()
				return
			}
		}
		c.close()
		return
	}
	go c.serverToClient(bufio.NewReader(server))
	c.clientToServer(fromClient, server)
}

// setServer records the dialled connection unless the proxy connection was
// closed meanwhile.
func (c *proxyConn) setServer(server net.Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.server = server
	return true
}

// copyRaw copies the server's bytes to the client until either ends.
func (c *proxyConn) copyRaw() {
	defer c.p.wg.Done()
	io.Copy(c.client, c.serverConn())
	c.close()
}

func (c *proxyConn) serverConn() net.Conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.server
}

// clientToServer forwards frames and, for a create while the lost-reply
// fault is armed, takes the fault onto this connection before the request
// can reach the server (so its reply cannot overtake the bookkeeping).
func (c *proxyConn) clientToServer(r *bufio.Reader, server net.Conn) {
	defer c.close()
	var buf []byte
	for first := true; ; first = false {
		frame, err := readFrame(r, buf)
		if err != nil {
			return
		}
		buf = frame
		// The first frame is the ConnectRequest, which has no header.
		if xid, op, ok := requestHeader(frame); ok && !first && isCreate(op) {
			c.carryFault(xid)
		}
		if _, err := server.Write(frame); err != nil {
			return
		}
	}
}

func (c *proxyConn) carryFault(xid int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped != nil || c.closed {
		return
	}
	if ch := c.p.takeArmed(); ch != nil {
		c.dropXid, c.dropped = xid, ch
	}
}

// serverToClient forwards frames, watch events and pings included, except
// the reply the carried fault drops: then it closes both sides and fires.
func (c *proxyConn) serverToClient(r *bufio.Reader) {
	defer c.p.wg.Done()
	defer c.close()
	var buf []byte
	for first := true; ; first = false {
		frame, err := readFrame(r, buf)
		if err != nil {
			return
		}
		buf = frame
		// The first frame is the ConnectResponse, which has no header.
		if xid, ok := replyXid(frame); ok && !first {
			if fired := c.takeFault(xid); fired != nil {
				c.close()
				close(fired)
				return
			}
		}
		if _, err := c.client.Write(frame); err != nil {
			return
		}
	}
}

// takeFault returns the carried fault's channel if xid is the reply it
// drops, and forgets the fault.
func (c *proxyConn) takeFault(xid int32) chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped == nil || xid != c.dropXid {
		return nil
	}
	ch := c.dropped
	c.dropped = nil
	return ch
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
	c.dropped = nil
	c.mu.Unlock()
	c.client.Close()
	if server != nil {
		server.Close()
	}
	c.p.forget(c, unfired)
}
