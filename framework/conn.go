package framework

import (
	"context"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/internal/zkconn"
)

// The client's side of the connection layer (internal/zkconn): which
// connection is live, and the questions users ask of its server.

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

// liveWire returns the live connection's wire, nil between connections.
func (c *Client) liveWire() *zkconn.Conn {
	c.mu.Lock()
	h := c.h
	c.mu.Unlock()
	if h == nil {
		return nil
	}
	return h.wire.Live()
}

// sendable holds a request back until it may go out on conn: while
// go-zookeeper is not connected it fails with zk.ErrConnectionClosed (a
// retryable connection loss: a request queued now would be sent the
// instant the session is back, before the watches are set again), and on a
// new connection whose watches go-zookeeper sets again it waits for the
// setWatches request to be written (at most a second), or ctx.
func (c *Client) sendable(ctx context.Context, conn *zk.Conn) error {
	switch conn.State() {
	case zk.StateHasSession, zk.StateConnectedReadOnly:
	default:
		return zk.ErrConnectionClosed
	}
	c.mu.Lock()
	w := c.h.wire
	c.mu.Unlock()
	return w.WaitWatchesSet(ctx)
}

// PersistentWatches reports whether the server of the live connection has
// persistent watches (ZooKeeper 3.6 or later), asking it (srvr) if not
// known yet. It waits for a connection on ctx. A server that does not
// answer srvr (not in 4lw.commands.whitelist) is taken to have them until
// it refuses an AddWatch.
func (c *Client) PersistentWatches(ctx context.Context) (bool, error) {
	if c == nil {
		return false, ErrNilClient
	}
	wc, err := c.wireFor(ctx)
	if err != nil {
		return false, err
	}
	return c.pw.Capable(wc), nil
}

// ServerVersion asks the live connection's server for its version (srvr,
// on a connection of its own made with the client's dialer) and returns
// it ("3.8.0"), or "" if the server does not say (srvr not in its
// 4lw.commands.whitelist). It waits for a connection on ctx.
func (c *Client) ServerVersion(ctx context.Context) (string, error) {
	if c == nil {
		return "", ErrNilClient
	}
	wc, err := c.wireFor(ctx)
	if err != nil {
		return "", err
	}
	v, err := wc.ServerVersion()
	if err != nil {
		return "", nil
	}
	return v, nil
}

// wireFor returns the live connection, once connected, with what its
// server says of persistent watches asked if not known.
func (c *Client) wireFor(ctx context.Context) (*zkconn.Conn, error) {
	if ctx == nil {
		return nil, invalid("nil context")
	}
	for {
		if err := c.waitConnected(ctx); err != nil {
			return nil, err
		}
		if wc := c.liveWire(); wc != nil {
			c.pw.Capable(wc)
			return wc, nil
		}
		select {
		case <-c.StateChanged():
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
