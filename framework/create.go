package framework

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/internal/callgate"
	"github.com/gocurator/curator/internal/protname"
	"github.com/gocurator/curator/internal/telemetry/clienttel"
	"github.com/gocurator/curator/internal/zkconn"
	"github.com/gocurator/curator/internal/zkwire"
	"github.com/gocurator/curator/retry"
)

// CreateOption modifies Create, like Curator's create() builder. Options
// that also apply to other verbs (Compressed, Idempotent, ...) implement
// those verbs' option interfaces too.
type CreateOption interface {
	applyCreate(*createOptions) error
}

// createOption is a CreateOption that applies only to Create.
type createOption func(*createOptions) error

func (f createOption) applyCreate(o *createOptions) error { return f(o) }

type createOptions struct {
	// compress is the compression choice of this call (compress.go).
	compress compressChoice
	// idempotent and orSet say what a NodeExists means (idempotent.go).
	idempotent bool
	orSet      bool
	orSetVer   int32
	found      *zk.Stat // the existing node's Stat, when it was found
	stat       *zk.Stat
	list       *[]string // ListingParent's
	listed     bool      // *list was filled by the listing sent behind the create
	mode       Mode
	protected  bool
	parents    bool
	containers bool
	acl        []zk.ACL
	ttl        time.Duration
}

// WithMode sets the create mode (default Persistent).
func WithMode(m Mode) CreateOption {
	return createOption(func(o *createOptions) error {
		if m < Persistent || m > PersistentSequentialWithTTL {
			return invalid("unknown create mode %d", int(m))
		}
		o.mode = m
		return nil
	})
}

// Protected makes the create survive a lost reply (Curator's
// withProtection): the node's name gets a "_c_<uuid>-" prefix, and before
// every retry the parent is searched for that prefix, so a create that the
// server applied but whose reply was lost is found rather than made twice.
// An ephemeral node found from another session is deleted and made again.
// If the create finally fails, a background task deletes any node it may
// have left, until it succeeds or the client closes.
func Protected() CreateOption {
	return createOption(func(o *createOptions) error { o.protected = true; return nil })
}

// CreatingParents creates missing ancestors as persistent nodes.
func CreatingParents() CreateOption {
	return createOption(func(o *createOptions) error { o.parents = true; return nil })
}

// CreatingParentContainers creates missing ancestors as container nodes,
// which the server deletes once they are empty.
func CreatingParentContainers() CreateOption {
	return createOption(func(o *createOptions) error { o.parents, o.containers = true, true; return nil })
}

// WithACL sets the node's ACL instead of the client's ACL provider's.
func WithACL(acl []zk.ACL) CreateOption {
	return createOption(func(o *createOptions) error {
		if len(acl) == 0 {
			return invalid("empty ACL")
		}
		o.acl = acl
		return nil
	})
}

// WithTTL sets the TTL of a PersistentWithTTL or PersistentSequentialWithTTL
// node; it must be positive.
func WithTTL(ttl time.Duration) CreateOption {
	return createOption(func(o *createOptions) error {
		if ttl <= 0 {
			return invalid("TTL %v must be positive", ttl)
		}
		o.ttl = ttl
		return nil
	})
}

// StoringStatIn fills st with the created node's Stat (Curator's
// storingStatIn). Czxid, Mzxid and EphemeralOwner are always right (they
// make a lock's fencing token and owner check); they are read off the
// create's reply when it passes the client's connection, which costs no
// request, and otherwise with an exists request, which fills every field.
func StoringStatIn(st *zk.Stat) CreateOption {
	return createOption(func(o *createOptions) error {
		if st == nil {
			return invalid("nil Stat")
		}
		o.stat = st
		return nil
	})
}

// ListingParent fills children with the names of the parent's children,
// the created node among them, as soon as the create succeeds: the listing
// is sent right behind the create request, on the same connection, so the
// two cost one round trip (ZooKeeper answers a session's requests in order,
// so the listing is taken after the create). When that cannot be done (the
// create had to make its parents, or was retried), a listing follows the
// create. This is a lock's first look at its queue, in the round trip of
// its create.
func ListingParent(children *[]string) CreateOption {
	return createOption(func(o *createOptions) error {
		if children == nil {
			return invalid("nil children")
		}
		o.list = children
		return nil
	})
}

// wireOf returns what conn's frames told us, nil if conn was replaced.
func (c *Client) wireOf(conn *zk.Conn) *zkconn.Wire {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.h != nil && c.h.conn == conn {
		return c.h.wire
	}
	return nil
}

// statFor fills o.stat for the node created (server path full) by a
// request for reqPath: from the reply if it was seen, else with exists.
func (c *Client) statFor(ctx context.Context, w *zkconn.Wire, reqPath, created string, o *createOptions) error {
	if w != nil {
		if r, ok := w.Take(reqPath); ok && r.Path == c.full(created) {
			*o.stat = zk.Stat{Czxid: r.Zxid, Mzxid: r.Zxid, Pzxid: r.Zxid}
			if o.mode.IsEphemeral() {
				o.stat.EphemeralOwner = r.Session
			}
			return nil
		}
	}
	st, err := c.Exists(ctx, created)
	if err != nil {
		return err
	}
	if st == nil {
		return fmt.Errorf("create %s: %w: deleted right after its creation", created, zk.ErrNoNode)
	}
	*o.stat = *st
	return nil
}

// ProtectedPrefix is the start of every protected node's name.
const ProtectedPrefix = "_c_"

// IsProtected reports whether name is a protected node name as Curator
// recognises it: longer than 40, "_c_" prefix, a UUID in [3, 39) and a '-'
// at index 39.
func IsProtected(name string) bool { return protname.Is(name) }

// StripProtected returns name without its protected prefix.
func StripProtected(name string) string { return protname.Strip(name) }

// Create creates a node at path with data and returns the path the server
// gave it (with its sequence number, for sequential modes). nil data means
// the client's default data; use []byte{} for empty. It runs under the retry
// policy.
//
// When ctx ends with a request on its way, the request may still be
// applied, and Create never leaves that node behind. It returns ctx's
// error once it has waited for the reply and deleted the node the reply
// says was made (with Protected, whatever its id names), but never longer
// than CleanupContext allows: a round trip (one second) past ctx's end on
// a live connection, nothing while disconnected. Past that, the request,
// when its reply comes, deletes the node itself, at once on its connection
// or else in the background as a Guaranteed delete does, until the client
// closes (Close waits, up to a second, for a create in flight and that
// delete). Only the node as made is deleted: one of another session, or
// one whose data was written since (someone took it up), is left. So on any error Create leaves no node of
// its own, with two exceptions: missing parents it made stay
// (CreatingParents), and, without Protected, a create whose reply is lost
// with the connection may have been applied and cannot be told from
// another's node: use Protected where that matters. With OrSetData, a set
// made instead of the create stands: a write cannot be taken back. When
// the node was made but what StoringStatIn or ListingParent ask for after
// it fails, Create returns the node's path with that error (a zk.ErrNoNode
// then says the node went already) and deletes the node in the background.
func (c *Client) Create(ctx context.Context, path string, data []byte, opts ...CreateOption) (string, error) {
	if c == nil {
		return "", ErrNilClient
	}
	var o createOptions
	for i, opt := range opts {
		if opt == nil {
			return "", invalid("create option %d is nil", i)
		}
		if err := opt.applyCreate(&o); err != nil {
			return "", err
		}
	}
	if err := ValidatePath(path); err != nil {
		return "", err
	}
	if path == "/" {
		return "", fmt.Errorf("%w: cannot create the root", ErrInvalidPath)
	}
	if o.mode.isTTL() != (o.ttl > 0) {
		return "", invalid("mode %v with TTL %v", o.mode, o.ttl)
	}
	if data == nil {
		data = c.opts.defaultData
	}
	data, err := c.compress(o.compress, path, data)
	if err != nil {
		return "", fmt.Errorf("create %s: %w", path, err)
	}
	acl := o.acl
	if acl == nil {
		acl = c.opts.aclProvider.ACLForPath(path)
	}
	// The request must fit the server's jute.maxbuffer: refused here, it
	// costs nothing; sent, it would cost the connection.
	size := zkwire.ReqHeaderSize + zkwire.CreateBodySize(c.full(path), data, acl, o.mode.isTTL())
	if o.protected {
		size += protname.Overhead
	}
	if err := c.checkSize("create", size, len(data)); err != nil {
		return "", fmt.Errorf("create %s: %w", path, err)
	}
	if o.protected {
		return c.createProtected(ctx, path, data, acl, &o)
	}
	return c.createPlain(ctx, path, data, acl, &o)
}

// createPlain is Create without Protected: attempts under the retry
// policy, then what the options ask for; a node made for a call that
// fails is deleted (see createCall).
func (c *Client) createPlain(ctx context.Context, path string, data []byte, acl []zk.ACL, o *createOptions) (string, error) {
	var (
		created string
		call    createCall // what the caller and an attempt it abandons share
	)
	err := c.do(ctx, clienttel.OpCreate, func(conn *zk.Conn) error {
		// Close waits, briefly, for the reply of a create in flight
		// (replyGateOf), so that a create it races is heard, not left
		// applied unheard.
		g := c.replyGateOf(conn)
		if !g.Enter() {
			return zk.ErrConnectionClosed
		}
		defer g.Leave()
		if !call.begin() {
			return context.Canceled // the caller is gone: send nothing
		}
		o.found = nil
		var cw *zkconn.Wire
		if o.stat != nil || o.list != nil {
			if cw = c.wireOf(conn); cw != nil {
				cw.Expect(c.full(path))
				call.mu.Lock()
				call.w = cw
				call.mu.Unlock()
			}
		}
		p, err := c.createListing(ctx, conn, path, data, acl, o, cw)
		// OrSetData and Idempotent: the node exists. A node deleted
		// between our create and our set is created again, a few times.
		for tries := 0; errors.Is(err, zk.ErrNodeExists) && (o.idempotent || o.orSet) && tries < 5; tries++ {
			var st *zk.Stat
			p, st, err = c.existing(conn, path, data, o, err)
			if err == nil {
				o.found = st
				break
			}
			if !errors.Is(err, zk.ErrNoNode) {
				break
			}
			p, err = c.createOnce(ctx, conn, path, data, acl, o)
		}
		created = p
		var mk madeNode
		if err == nil && o.found == nil {
			mk = madeNode{path: p, ephemeral: o.mode.IsEphemeral(), session: conn.SessionID()}
		}
		if call.end(mk) {
			// The caller stopped waiting: the node is not its, and
			// the clean-up is this attempt's.
			mk = c.withReply(mk, cw, c.full(path))
			if mk.path != "" {
				c.undoCreate(conn, mk)
			}
		}
		return err
	})
	if err == nil {
		err = c.finishCreate(ctx, call.w, c.full(path), created, o)
		if err == nil {
			return created, nil
		}
		// The node was made, but the call fails: it must not stay.
		if call.made.path != "" {
			c.undoCreateInBackground(call.made)
		}
		return created, err
	}
	c.abandonCreate(ctx, &call, c.full(path))
	return "", fmt.Errorf("create %s: %w", path, err)
}

// abandonCreate deletes what the attempts of a Create that failed may have
// made: an attempt still in flight (its ctx ended) is waited for, and the
// node its reply says it made is deleted, while that is quick
// (CleanupContext: a round trip past ctx's end on a live connection,
// nothing when disconnected); past that, the attempt deletes it itself
// when its reply comes. reqFull is the create's server path.
func (c *Client) abandonCreate(ctx context.Context, call *createCall, reqFull string) {
	mk, w, pending, idle := call.abandon()
	if !pending && mk.path == "" {
		c.withReply(mk, w, reqFull) // forget the reply asked for
		return
	}
	dctx, cancel := c.CleanupContext(ctx)
	defer cancel()
	if pending {
		select {
		case <-idle:
		case <-dctx.Done():
		case <-c.ctx.Done():
		}
		var ok bool
		if mk, w, ok = call.takeBack(); !ok {
			return // the attempt cleans up when it ends
		}
	}
	// No attempt in flight: what the last one made is ours to delete.
	mk = c.withReply(mk, w, reqFull)
	if mk.path == "" {
		return
	}
	if dctx.Err() != nil {
		c.undoCreateInBackground(mk)
		return
	}
	if err := c.do(dctx, clienttel.OpCleanup, func(conn *zk.Conn) error { return c.deleteMade(conn, mk) }); err != nil {
		c.undoCreateInBackground(mk)
	}
}

// createCall is what the attempts of one Create share with its caller, so
// that a node made by an attempt the caller stopped waiting for (its ctx
// ended while the request was on its way) is deleted rather than left
// behind: by the caller, which waits a little for the attempt
// (abandonCreate), or, past that, by the attempt when its reply comes. At
// most one attempt is in flight: the retry loop runs them one after
// another and stops when the caller leaves.
type createCall struct {
	mu        sync.Mutex
	inflight  bool
	abandoned bool          // the call failed: no more attempts
	idle      chan struct{} // closed when the attempt in flight at abandon ends
	handOff   bool          // the caller stopped waiting: the attempt cleans up
	made      madeNode      // the node the last attempt to end made, if any
	w         *zkconn.Wire  // the wire asked for the reply (StoringStatIn, ListingParent)
}

// begin starts an attempt; false once the caller has left.
func (cc *createCall) begin() bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.abandoned {
		return false
	}
	cc.inflight = true
	return true
}

// end ends the attempt that made mk (zero: made nothing) and reports
// whether the caller handed the clean-up to it.
func (cc *createCall) end(mk madeNode) (handOff bool) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.inflight = false
	cc.made = mk
	if cc.idle != nil {
		close(cc.idle)
		cc.idle = nil
	}
	return cc.handOff
}

// abandon records that the call failed. If an attempt is in flight
// (pending), idle is closed when it ends; if not, mk is what the last
// attempt made and w the wire it asked for the reply.
func (cc *createCall) abandon() (mk madeNode, w *zkconn.Wire, pending bool, idle <-chan struct{}) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.abandoned = true
	if cc.inflight {
		cc.idle = make(chan struct{})
		return madeNode{}, nil, true, cc.idle
	}
	return cc.made, cc.w, false, nil
}

// takeBack returns what the attempt the caller waited for made, and its
// wire, once it ended (ok); if it is still in flight, the clean-up is
// handed to it.
func (cc *createCall) takeBack() (mk madeNode, w *zkconn.Wire, ok bool) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.inflight {
		cc.handOff = true
		return madeNode{}, nil, false
	}
	return cc.made, cc.w, true
}

// madeNode is a node a create made that its caller was never given.
type madeNode struct {
	path      string // without namespace
	ephemeral bool
	session   int64 // the session the create ran in (ephemeral owner)
	czxid     int64 // from the create's reply when seen (StoringStatIn), else 0
}

// withReply takes the reply to the create of reqFull (a server path) off
// the wire w, which was asked for it, and adds its czxid to mk when the
// reply named mk's node.
func (c *Client) withReply(mk madeNode, w *zkconn.Wire, reqFull string) madeNode {
	if w == nil {
		return mk
	}
	if r, ok := w.Take(reqFull); ok && mk.path != "" && r.Path == c.full(mk.path) {
		mk.czxid = r.Zxid
	}
	return mk
}

// ours reports whether st is the node mk made, untouched since: the same
// czxid when the reply told it, our session as its owner for an ephemeral
// node, and data version 0. A node someone has written to since is left:
// whoever wrote it took it up (a node.Node adopting a node of its session,
// say), and deleting it would undo their write.
func (mk madeNode) ours(st *zk.Stat) bool {
	switch {
	case mk.czxid != 0 && st.Czxid != mk.czxid:
		return false
	case mk.ephemeral && (mk.session == 0 || st.EphemeralOwner != mk.session):
		return false
	}
	return st.Version == 0
}

// undoCreate deletes mk, made by a create whose caller stopped waiting: at
// once on conn, the connection that carried the create, and, if that
// fails for the connection, in the background as a guaranteed delete does
// (until it succeeds or the client closes; an ephemeral node goes with its
// session at Close anyway).
func (c *Client) undoCreate(conn *zk.Conn, mk madeNode) {
	// Not on a connection go-zookeeper has lost: the requests would wait
	// for the next one and race its setting of watches (see sendable).
	err := c.sendable(c.ctx, conn)
	if err == nil {
		err = connectionLoss(c.deleteMade(conn, mk))
	}
	if err != nil && retry.IsRetryable(err) {
		c.undoCreateInBackground(mk)
		return
	}
	if err != nil {
		c.log.Warn("node of an abandoned create left", zap.String("path", mk.path), zap.Error(err))
	}
}

// undoCreateInBackground deletes mk in the background (see undoCreate).
func (c *Client) undoCreateInBackground(mk madeNode) {
	if c.isClosed() && !mk.ephemeral {
		c.log.Warn("node of an abandoned create left: the client closed", zap.String("path", mk.path))
		return
	}
	c.background(func(_ context.Context, conn *zk.Conn) error { return c.deleteMade(conn, mk) })
}

// deleteMade deletes mk if it is still the node the create made (ours).
func (c *Client) deleteMade(conn *zk.Conn, mk madeNode) error {
	full := c.full(mk.path)
	ok, st, err := conn.Exists(full)
	if err != nil {
		return err
	}
	if !ok {
		return nil
	}
	if !mk.ours(st) {
		c.log.Info("node of an abandoned create taken up since; left", zap.String("path", mk.path))
		return nil
	}
	switch err := conn.Delete(full, 0); {
	case err == nil:
		c.log.Info("deleted node of an abandoned create", zap.String("path", mk.path))
		return nil
	case errors.Is(err, zk.ErrNoNode):
		return nil
	case errors.Is(err, zk.ErrBadVersion), errors.Is(err, zk.ErrNotEmpty):
		c.log.Info("node of an abandoned create taken up since; left", zap.String("path", mk.path))
		return nil
	default:
		return err
	}
}

// finishCreate fills what the options ask for after a successful create:
// the Stat (from the reply seen on the wire w, else with exists) and the
// parent's listing (unless it came with the create).
func (c *Client) finishCreate(ctx context.Context, w *zkconn.Wire, reqPath, created string, o *createOptions) error {
	if o.found != nil {
		// The node existed (OrSetData, Idempotent): its Stat is known.
		if w != nil {
			w.Take(reqPath)
		}
		if o.stat != nil {
			*o.stat = *o.found
		}
	} else if o.stat != nil {
		if err := c.statFor(ctx, w, reqPath, created, o); err != nil {
			return err
		}
	} else if w != nil {
		w.Take(reqPath)
	}
	if o.list != nil && !o.listed {
		parent, _ := SplitPath(created)
		children, _, err := c.Children(ctx, parent)
		if err != nil {
			return err
		}
		*o.list = children
	}
	return nil
}

// errNotListed means the create ended before its request was written.
var errNotListed = errors.New("curator: create not sent")

// createdResult is the create's answer in createListing.
type createdResult struct {
	p   string
	err error
}

// createdChans holds createListing's result channels (buffered, empty): a
// channel of a pointerful type costs two allocations, on every acquire.
var createdChans = sync.Pool{New: func() any { return make(chan createdResult, 1) }}

// createListing is createOnce that, with ListingParent, sends a listing of
// the parent right behind the create request on the same connection (w
// says when the create is written) and, if the listing shows the created
// node, keeps it in o.list.
func (c *Client) createListing(ctx context.Context, conn *zk.Conn, path string, data []byte, acl []zk.ACL, o *createOptions, w *zkconn.Wire) (string, error) {
	if o.list == nil || w == nil {
		return c.createOnce(ctx, conn, path, data, acl, o)
	}
	sent := w.Expect(c.full(path))
	// The channel goes back to the pool once its one result is read,
	// which happens on every path below.
	created := createdChans.Get().(chan createdResult)
	go func() {
		p, err := c.createOnce(ctx, conn, path, data, acl, o)
		created <- createdResult{p, err}
	}()
	var (
		r        createdResult
		children []string
		lerr     = errNotListed
	)
	select {
	case <-sent:
		parent, _ := SplitPath(path)
		children, _, lerr = conn.Children(c.full(parent))
		r = <-created
	case r = <-created:
	}
	createdChans.Put(created)
	if r.err == nil && lerr == nil {
		_, name := SplitPath(r.p)
		if slices.Contains(children, name) {
			*o.list = children
			o.listed = true
		}
	}
	return r.p, r.err
}

// createOnce makes one attempt, creating missing parents (and the namespace)
// when the server answers that the parent does not exist. Container parents
// can be deleted by the server between our creating them and our create, so
// that case is tried a few times.
func (c *Client) createOnce(ctx context.Context, conn *zk.Conn, path string, data []byte, acl []zk.ACL, o *createOptions) (string, error) {
	p, err := c.rawCreate(conn, c.full(path), data, acl, o)
	parent, _ := SplitPath(path)
	for tries := 0; errors.Is(err, zk.ErrNoNode) && tries < 5; tries++ {
		switch {
		case o.parents:
			err = c.ensureParents(conn, parent, o.containers)
		case parent == "/" && c.prefix != "":
			err = c.ensureNamespace(conn)
		default:
			return "", err
		}
		if err != nil {
			return "", err
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		p, err = c.rawCreate(conn, c.full(path), data, acl, o)
	}
	return c.strip(p), err
}

func (c *Client) rawCreate(conn *zk.Conn, full string, data []byte, acl []zk.ACL, o *createOptions) (string, error) {
	switch {
	case o.mode == Container:
		return c.createContainer(conn, full, data, acl)
	case o.mode.isTTL():
		g := c.replyGateOf(conn)
		if !g.Enter() {
			return "", zk.ErrConnectionClosed
		}
		defer g.Leave()
		return conn.CreateTTL(full, data, o.mode.flags(), acl, o.ttl)
	default:
		return conn.Create(full, data, o.mode.flags(), acl)
	}
}

// createContainer is conn.CreateContainer under conn's reply gate.
func (c *Client) createContainer(conn *zk.Conn, full string, data []byte, acl []zk.ACL) (string, error) {
	g := c.replyGateOf(conn)
	if !g.Enter() {
		return "", zk.ErrConnectionClosed
	}
	defer g.Leave()
	return conn.CreateContainer(full, data, zk.FlagContainer, acl)
}

// A connection's reply gate (internal/callgate) keeps it open while the
// calls that read their reply unguarded are in flight on it. go-zookeeper
// v1.0.4's
// CreateTTL and CreateContainer read the reply struct even when they
// return ErrConnectionClosed because the connection's Close began; if the
// request was on the wire, its receive loop may be decoding the reply into
// that struct at the same moment: a data race (its other verbs check for
// ErrConnectionClosed first). closeConn drains the gate before it closes
// the connection, so the reply is decoded, and the call has returned,
// before Close begins.
//
// replyGateOf returns conn's gate, a closed one if conn is no longer the
// client's connection (a request for it then fails as a connection loss,
// and its retry goes to the current connection).
func (c *Client) replyGateOf(conn *zk.Conn) *callgate.Gate {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.h == nil || c.h.conn != conn {
		return callgate.Closed()
	}
	return &c.h.replies
}

// ensureParents creates path and its missing ancestors, top down.
func (c *Client) ensureParents(conn *zk.Conn, path string, containers bool) error {
	if path == "/" {
		return c.ensureNamespace(conn)
	}
	if err := c.ensureNamespace(conn); err != nil {
		return err
	}
	segs := strings.Split(path[1:], "/")
	p := ""
	for _, s := range segs {
		p += "/" + s
		var err error
		acl := c.opts.aclProvider.ACLForPath(p)
		if err := c.checkSize("create parent "+p, zkwire.ReqHeaderSize+zkwire.CreateBodySize(c.full(p), nil, acl, false), 0); err != nil {
			return err
		}
		if containers {
			_, err = c.createContainer(conn, c.full(p), []byte{}, acl)
		} else {
			_, err = conn.Create(c.full(p), []byte{}, zk.FlagPersistent, acl)
		}
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	return nil
}

// ensureNamespace creates the chroot and namespace nodes as containers.
// Containers vanish when empty, so this runs again whenever a create finds
// its parent missing.
func (c *Client) ensureNamespace(conn *zk.Conn) error {
	if c.prefix == "" {
		return nil
	}
	p := ""
	acl := c.opts.aclProvider.ACLForPath("/")
	if err := c.checkSize("create namespace", zkwire.ReqHeaderSize+zkwire.CreateBodySize(c.prefix, nil, acl, false), 0); err != nil {
		return err
	}
	for _, s := range strings.Split(c.prefix[1:], "/") {
		p += "/" + s
		_, err := c.createContainer(conn, p, []byte{}, acl)
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	return nil
}
