package framework

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/internal/protname"
	"github.com/gocurator/curator/internal/telemetry/clienttel"
	"github.com/gocurator/curator/internal/zkconn"
	"github.com/gocurator/curator/retry"
)

// A protected create (Protected) in steps: name the node with a fresh
// protected id (newProtectedCall); make attempts under the retry policy,
// each of which, on a retry, first looks for a node an earlier attempt made
// (protectedAttempt, findProtected); and if the create fails in a way that
// may have left a node, delete it by its id (abandon, cleanUpProtected).

// createProtected is the protected create of wire-format.md: before each
// retry, look for our protected id among the parent's children.
//
// When ctx ends, c.do returns while an attempt's request may still be on
// its way: the server may apply the create after we gave up. So the
// caller waits, within CleanupContext's grace, for the attempt to end and
// then deletes what it made; past the grace, the attempt itself, when it
// ends, deletes by its protected id whatever it may have made.
func (c *Client) createProtected(ctx context.Context, path string, data []byte, acl []zk.ACL, o *createOptions) (string, error) {
	pc := newProtectedCall(path)
	err := c.do(ctx, clienttel.OpCreate, func(conn *zk.Conn) error {
		return c.protectedAttempt(ctx, conn, pc, data, acl, o)
	})
	pc.mu.Lock()
	lastWire := pc.w
	pc.mu.Unlock()
	if err == nil {
		if pc.foundStat != nil && o.stat != nil {
			*o.stat = *pc.foundStat
			o.stat = nil // filled: finishCreate only forgets the wire's note
		}
		if err := c.finishCreate(ctx, lastWire, c.full(pc.path), pc.created, o); err != nil {
			// The node was made, but the call fails: it must not stay.
			c.findAndDeleteInBackground(pc.parent, pc.prefix)
			return pc.created, err
		}
		return pc.created, nil
	}
	if lastWire != nil {
		lastWire.Take(c.full(pc.path))
	}
	if pending, idle, mayExist := pc.abandon(ctx, err); mayExist {
		c.cleanUpProtected(ctx, pc, pending, idle)
	}
	return "", fmt.Errorf("create %s: %w", path, err)
}

// protectedCall is one protected create: the name it makes, and the state
// its attempts share with the caller (one allocation instead of one per
// variable).
type protectedCall struct {
	parent string // the node's parent
	prefix string // "_c_<uuid>-", the node's protected id
	path   string // parent/prefix+name, the path asked of the server

	mu        sync.Mutex
	attempted bool
	inflight  int
	abandoned bool
	idle      chan struct{} // closed when the last attempt ends after abandon
	handOff   bool          // the caller stopped waiting: attempts clean up
	w         *zkconn.Wire  // the wire asked for the create's reply, if any
	// Set by the attempt that succeeds; read once c.do has returned.
	created   string
	foundStat *zk.Stat // of a node found by its protected id
}

// newProtectedCall names the protected create of path: a fresh protected
// id put before the node's name.
func newProtectedCall(path string) *protectedCall {
	parent, name := SplitPath(path)
	dir := parent
	if dir == "/" {
		dir = ""
	}
	// One allocation for the path; the prefix is a part of it (this is on
	// every lock's acquire path).
	var id [protname.Overhead]byte
	protname.ID(&id)
	var b strings.Builder
	b.Grow(len(dir) + 1 + len(id) + len(name))
	b.WriteString(dir)
	b.WriteByte('/')
	b.Write(id[:])
	b.WriteString(name)
	ppath := b.String()
	return &protectedCall{parent: parent, prefix: ppath[len(dir)+1 : len(dir)+1+len(id)], path: ppath}
}

// protectedAttempt is one attempt of a protected create. A retry first
// looks for the node an earlier attempt may have made (its reply lost);
// otherwise, or if there is none, it sends the create, with the parent's
// listing behind it when ListingParent asks.
func (c *Client) protectedAttempt(ctx context.Context, conn *zk.Conn, pc *protectedCall, data []byte, acl []zk.ACL, o *createOptions) (err error) {
	// Close waits, briefly, for the reply of a create in flight (see
	// Create), and for the clean-up below when the caller has left.
	g := c.replyGateOf(conn)
	if !g.Enter() {
		return zk.ErrConnectionClosed
	}
	defer g.Leave()
	retrying, ok := pc.begin()
	if !ok {
		return context.Canceled
	}
	defer func() { c.endProtectedAttempt(conn, pc, err) }()
	if retrying {
		found, st, err := c.findProtected(conn, pc.parent, pc.prefix, o.mode.IsEphemeral())
		if err != nil {
			return err
		}
		if found != "" {
			c.tel.Recovered()
			pc.created, pc.foundStat = found, st
			return nil
		}
	}
	var cw *zkconn.Wire
	if o.stat != nil || o.list != nil {
		if cw = c.wireOf(conn); cw != nil {
			cw.Expect(c.full(pc.path))
			pc.mu.Lock()
			pc.w = cw
			pc.mu.Unlock()
		}
	}
	p, err := c.createListing(ctx, conn, pc.path, data, acl, o, cw)
	pc.created = p
	return err
}

// findProtected returns the child of parent starting with prefix and its
// Stat (nil for persistent modes), or "". A found ephemeral node of another
// session is deleted: it belongs to a session that is gone, so it must not be
// taken for ours.
func (c *Client) findProtected(conn *zk.Conn, parent, prefix string, ephemeral bool) (string, *zk.Stat, error) {
	children, _, err := conn.Children(c.full(parent))
	if errors.Is(err, zk.ErrNoNode) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	for _, ch := range children {
		if !strings.HasPrefix(ch, prefix) {
			continue
		}
		p := JoinPath(parent, ch)
		ok, st, err := conn.Exists(c.full(p))
		if err != nil {
			return "", nil, err
		}
		if !ok {
			return "", nil, nil
		}
		if !ephemeral || st.EphemeralOwner == conn.SessionID() {
			return p, st, nil
		}
		c.log.Info("deleting protected node of a dead session", zap.String("path", p))
		if err := conn.Delete(c.full(p), -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return "", nil, err
		}
		return "", nil, nil
	}
	return "", nil, nil
}

// begin counts an attempt in flight and reports whether an earlier one was
// made; ok is false once the caller has abandoned the create.
func (pc *protectedCall) begin() (retrying, ok bool) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.abandoned {
		return false, false
	}
	retrying = pc.attempted
	pc.attempted = true
	pc.inflight++
	return retrying, true
}

// endProtectedAttempt counts an attempt ended with err. The last one to
// end after the caller abandoned the create wakes the caller, waiting to
// clean up; if the caller stopped waiting (handOff), the attempt deletes
// what the create may have made itself: at once on its connection, or
// else in the background.
func (c *Client) endProtectedAttempt(conn *zk.Conn, pc *protectedCall, err error) {
	pc.mu.Lock()
	pc.inflight--
	last := pc.abandoned && pc.inflight == 0
	if last && pc.idle != nil {
		close(pc.idle)
		pc.idle = nil
	}
	handOff, w := last && pc.handOff, pc.w
	pc.mu.Unlock()
	if !handOff {
		return
	}
	if w != nil {
		w.Take(c.full(pc.path)) // the caller, gone, will not
	}
	if !mayHaveMade(err) {
		return
	}
	// Not on a connection go-zookeeper has lost (see undoCreate).
	err = c.sendable(c.ctx, conn)
	if err == nil {
		err = c.findAndDelete(conn, pc.parent, pc.prefix)
	}
	if err != nil {
		c.findAndDeleteInBackground(pc.parent, pc.prefix)
	}
}

// mayHaveMade reports whether a create attempt that ended with err may
// have made its node: it did (nil), or its reply was lost or never waited
// for (a connection loss, ctx's end).
func mayHaveMade(err error) bool {
	return err == nil || retry.IsRetryable(connectionLoss(err)) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// abandon stops further attempts after the create failed with err. It
// reports whether an attempt is still in flight (idle is closed when the
// last one ends) and whether a node may exist: an attempt was made and
// the create failed in a way that leaves that open (an attempt still in
// flight, a connection loss, or ctx's end).
func (pc *protectedCall) abandon(ctx context.Context, err error) (pending bool, idle chan struct{}, mayExist bool) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.abandoned = true
	pending = pc.inflight > 0
	if pending {
		idle = make(chan struct{})
		pc.idle = idle
	}
	mayExist = pc.attempted && (pending || retry.IsRetryable(err) || ctx.Err() != nil)
	return pending, idle, mayExist
}

// cleanUpProtected deletes the node a failed protected create may have
// left. It waits for the attempt still in flight, if any, and deletes the
// node by its protected id, while that is quick (CleanupContext: a round
// trip past ctx's end on a live connection, nothing when disconnected);
// past that, the attempt, when it ends, or a background task does it.
func (c *Client) cleanUpProtected(ctx context.Context, pc *protectedCall, pending bool, idle <-chan struct{}) {
	dctx, cancel := c.CleanupContext(ctx)
	defer cancel()
	if pending {
		select {
		case <-idle:
		case <-dctx.Done():
		case <-c.ctx.Done():
		}
		pc.mu.Lock()
		if pc.inflight > 0 {
			pc.handOff = true
			pc.mu.Unlock()
			return
		}
		pc.mu.Unlock()
	}
	if dctx.Err() != nil {
		c.findAndDeleteInBackground(pc.parent, pc.prefix)
		return
	}
	if err := c.do(dctx, clienttel.OpCleanup, func(conn *zk.Conn) error { return c.findAndDelete(conn, pc.parent, pc.prefix) }); err != nil {
		c.findAndDeleteInBackground(pc.parent, pc.prefix)
	}
}

// findAndDeleteInBackground deletes the child of parent starting with
// prefix, if any, retrying until a listing succeeds or the client closes.
func (c *Client) findAndDeleteInBackground(parent, prefix string) {
	c.background(func(_ context.Context, conn *zk.Conn) error { return c.findAndDelete(conn, parent, prefix) })
}

// findAndDelete deletes the children of parent starting with prefix.
func (c *Client) findAndDelete(conn *zk.Conn, parent, prefix string) error {
	children, _, err := conn.Children(c.full(parent))
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, ch := range children {
		if strings.HasPrefix(ch, prefix) {
			err := conn.Delete(c.full(JoinPath(parent, ch)), -1)
			if err != nil && !errors.Is(err, zk.ErrNoNode) {
				return err
			}
			c.log.Info("deleted node of a failed protected create", zap.String("path", JoinPath(parent, ch)))
		}
	}
	return nil
}
