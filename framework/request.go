package framework

// The request path: every operation of the client runs through do
// (measured), doRetry (the retry policy), attempt (one try: wait for a
// connection and its credentials, run op) and awaitOp (wait for op on the
// caller's ctx).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	sync_atomic "sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/internal/telemetry/clienttel"
	"github.com/gocurator/curator/retry"
)

// do runs op as doRetry does, measuring it: its duration by operation and
// result, and, under a span that records, a child span.
func (c *Client) do(ctx context.Context, req clienttel.Op, op func(conn *zk.Conn) error) error {
	ctx, m := c.tel.Start(ctx, req)
	err := c.doRetry(ctx, req, op)
	m.End(ctx, resultOf(err))
	return err
}

// waitConnected holds an attempt back while the client is disconnected, as
// Curator does, for up to the connection timeout (then a retryable
// connection error lets the retry policy decide). Besides sparing requests
// that would fail, it keeps requests from being queued during a disconnect:
// go-zookeeper sends those the instant the session is back, and their
// replies race with its re-registration of watches (an unsynchronised read
// of lastZxid in sendSetWatches that the race detector reports).
func (c *Client) waitConnected(ctx context.Context) error {
	c.mu.Lock()
	st, closed := c.state, c.closed
	c.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if st.IsConnected() {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, c.opts.connectionTimeout)
	defer cancel()
	err := c.BlockUntilConnected(wctx)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("curator: not connected within %v: %w", c.opts.connectionTimeout, zk.ErrConnectionClosed)
	}
	return err
}

// current returns the connection to use, once its credentials are added.
func (c *Client) current(ctx context.Context) (*zk.Conn, error) {
	c.mu.Lock()
	h, closed := c.h, c.closed
	c.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	select {
	case <-h.ready:
		return h.readyConn()
	default:
	}
	select {
	case <-h.ready:
		return h.readyConn()
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.ctx.Done():
		return nil, ErrClosed
	}
}

// readyConn returns the connection once h.ready is closed, or the error of
// its credentials: no operation runs without them.
func (h *handle) readyConn() (*zk.Conn, error) {
	if h.authErr != nil {
		return nil, h.authErr
	}
	return h.conn, nil
}

// doRetry runs op on the current connection under the retry policy,
// honouring ctx: when ctx ends, doRetry returns at once, and a request
// already handed to go-zookeeper may still be sent and applied (go-zookeeper
// cannot take a request back). Every write decides what that leaves: a
// create deletes the node its late reply says it made (createCall), a
// protected one whatever its id names; a set, a delete, an ACL change and
// a transaction stand, and their docs say so. Operations call doRetry
// through do, which measures it (telemetry.go).
func (c *Client) doRetry(ctx context.Context, req clienttel.Op, op func(conn *zk.Conn) error) error {
	if ctx == nil {
		return invalid("nil context")
	}
	if c.isClosed() {
		return ErrClosed
	}
	// The first attempt runs without the retry machinery, whose contexts
	// and budget frame only retries need: most calls succeed at once.
	err := c.attempt(ctx, ctx, op)
	if err == nil || !retry.IsRetryable(err) {
		if err != nil && ctx.Err() == nil && c.isClosed() {
			return ErrClosed
		}
		return err
	}
	// Close must also end a call that sleeps before its next retry, which
	// only the context given to retry.Do can cut short.
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel)
	defer stop()
	// retry.Do's first attempt is the one made above: it reports that
	// attempt's error, so the policy counts it as before.
	first := err
	err = retry.Do(rctx, c.opts.retryPolicy, func(rctx context.Context) error {
		if first != nil {
			err := first
			first = nil
			return err
		}
		c.tel.Retried(ctx, req)
		return c.attempt(ctx, rctx, op)
	})
	if err != nil && ctx.Err() == nil && c.isClosed() {
		return ErrClosed
	}
	return err
}

// attempt makes one attempt of op: it waits (on rctx) for a connection and
// its credentials, and runs op, waiting for it on the caller's ctx.
func (c *Client) attempt(ctx, rctx context.Context, op func(conn *zk.Conn) error) error {
	if err := c.waitConnected(rctx); err != nil {
		return err
	}
	conn, err := c.current(rctx)
	if err != nil {
		return err
	}
	if err := c.sendable(ctx, conn); err != nil {
		return err
	}
	if n, ok := ctx.Value(attemptsKey{}).(*sync_atomic.Int32); ok {
		n.Add(1)
	}
	// The request waits on the caller's ctx, not rctx: Close fails
	// pending requests by itself, and a ctx without Done (Background)
	// then costs no goroutine per request.
	err = connectionLoss(awaitOp(ctx, op, conn))
	if errors.Is(err, zk.ErrConnectionClosed) {
		c.awaitDisconnect(rctx)
	}
	if err != nil && c.isClosed() && !errors.Is(err, ctx.Err()) {
		return ErrClosed
	}
	if err != nil {
		c.log.Debug("operation failed", zap.Error(err))
	}
	return err
}

type attemptsKey struct{}

// CountingAttempts returns a context under which every operation of a
// Client adds to n the attempts it sends to the server: 1 for a call that
// succeeded or was refused at its first try, more when the retry policy
// sent it again after a connection loss. A recipe reads it to know whether
// a refused conditional write is the whole story: with one attempt, the
// refusal (BadVersion, NodeExists) means the write was not applied; after
// a retry, an earlier attempt whose reply was lost may have been.
func CountingAttempts(ctx context.Context, n *sync_atomic.Int32) context.Context {
	return context.WithValue(ctx, attemptsKey{}, n)
}

// awaitDisconnect waits, briefly, for the client to report the connection
// loss a request just failed with (go-zookeeper fails the request before it
// reports Disconnected). A retry made before that would pass waitConnected
// and be queued on a dead connection, to be sent the instant the session is
// back, racing go-zookeeper's re-registration of watches (see
// waitConnected).
func (c *Client) awaitDisconnect(ctx context.Context) {
	c.mu.Lock()
	st, ch := c.state, c.changed.C()
	c.mu.Unlock()
	if !st.IsConnected() {
		return
	}
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-ctx.Done():
	case <-c.ctx.Done():
	}
}

// connectionLoss marks an error of the network under a request (go-zookeeper
// hands a failed socket write to the request it was sending, as a raw
// *net.OpError such as "broken pipe") as the connection loss it is:
// zk.ErrConnectionClosed, which the retry policy retries.
func connectionLoss(err error) error {
	if err == nil || errors.Is(err, zk.ErrConnectionClosed) || !(isNetError(err) || errors.Is(err, io.EOF)) {
		return err
	}
	return fmt.Errorf("%w: %w", zk.ErrConnectionClosed, err)
}

// isNetError reports whether err is a net.Error. On its own, so that the
// target errors.As needs is allocated only for an error, not on every call
// of connectionLoss (two allocations per lock cycle).
func isNetError(err error) bool {
	var ne net.Error
	return errors.As(err, &ne)
}

// awaitOp runs op on conn, returning early with ctx's error if ctx ends
// first (op keeps running to completion then; its results must not be
// read by the caller, and whatever op's request did on the server is op's
// to undo: see doRetry). It allocates nothing for a ctx without Done, and for one with
// Done the waiting goroutine's state comes from a pool (it is returned by the waiter once
// the result is read; a call abandoned on ctx's end is left to the
// collector).
func awaitOp(ctx context.Context, op func(*zk.Conn) error, conn *zk.Conn) error {
	if ctx.Done() == nil {
		return op(conn)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	cl := opCalls.Get().(*opCall)
	cl.op, cl.conn = op, conn
	go cl.run()
	select {
	case err := <-cl.done:
		cl.op, cl.conn = nil, nil
		opCalls.Put(cl)
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// opCall is one request awaited by awaitOp on a goroutine of its own.
type opCall struct {
	op   func(*zk.Conn) error
	conn *zk.Conn
	done chan error // buffered: run never blocks
}

var opCalls = sync.Pool{New: func() any { return &opCall{done: make(chan error, 1)} }}

func (cl *opCall) run() { cl.done <- cl.op(cl.conn) }
