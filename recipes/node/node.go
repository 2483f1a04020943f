package node

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/clock"
	"github.com/gocurator/curator/internal/fanout"
)

// Node keeps a znode in existence while it runs, making it again whenever
// it is lost: Curator's PersistentNode (PersistentEphemeralNode by
// default, PersistentTtlNode with WithTTL). It never takes over a node it
// did not make in its live session: see the package documentation. A Node
// is safe for concurrent use. Two Nodes of one client on one path are one
// session, so they share one node: use one Node per path and client. A nil *Node reports nothing: its calls that
// act on ZooKeeper return ErrNilHandle.
type Node struct {
	c    *framework.Client
	path string
	o    options
	log  *zap.Logger
	err  error // New's verdict on its arguments, returned by Start

	push chan struct{} // one token: serialises the writes of our data

	mu        sync.Mutex
	data      []byte
	gen       uint64         // bumped by SetData
	status    Event          // the current state
	actual    string         // our node's path once made ("" before)
	sessions  map[int64]bool // sessions this Node created in
	czxids    map[int64]bool // incarnations this Node made or adopted
	reg       registration   // our registered node; zero when none
	known     known          // left by the ended loop for remove
	version   int32          // reg's data version, as last seen
	pushed    uint64         // the gen of the data known to be on reg
	dirty     bool           // reg's data is not known to be ours (adopted)
	closed    bool
	waitOwner int64 // the other session whose node the loop waits out, 0 when none
	run       *run  // the running loop, nil when not started
	// cleaning, if not nil, is closed once a delete left to the
	// background is over: stop's (its ctx ended first: a failed
	// Start's, say) or removeLater's (a delete that failed), the later
	// taking over from the earlier; cleanErr is the last one's error.
	// Close waits for it, so that it never returns nil while a node of
	// ours may still be deleted.
	cleaning chan struct{}
	cleanErr error
	listen   fanout.Fanout[Event]

	// fits is the latest data known not to be refused for its size (on
	// a node, or New's), the data of gen fitsGen: a value the client
	// refuses (framework.ErrDataTooLarge) falls back to it, so that one
	// refused SetData never keeps the node from being made again.
	fits    []byte
	fitsGen uint64
}

// run is one life of the Node's loop, from a Start to Close (or to a
// failed Start).
type run struct {
	cancel context.CancelFunc
	done   chan struct{} // closed when the loop has ended
	first  chan struct{} // closed at the first registration
	err    error         // why the loop ended before registering; read after done
}

// New returns a Node for path with data, EPHEMERAL unless WithMode or
// WithTTL say otherwise. It does no I/O: Start makes the node. nil data is
// empty data. Invalid arguments (a nil client, an invalid path, options
// that do not go together) are reported by Start.
func New(c *framework.Client, path string, data []byte, opts ...Option) *Node {
	n := &Node{
		c:        c,
		path:     path,
		data:     slices.Clone(data),
		push:     make(chan struct{}, 1),
		sessions: map[int64]bool{},
		czxids:   map[int64]bool{},
		o:        options{mode: framework.Ephemeral, clock: clock.Real},
	}
	if n.data == nil {
		n.data = []byte{}
	}
	n.fits = n.data
	for _, opt := range opts {
		if opt != nil {
			opt(&n.o)
		}
	}
	n.err = n.validate()
	n.log = n.o.log
	if n.log == nil {
		n.log = zap.NewNop()
		if c != nil {
			n.log = c.Logger().Named("node")
		}
	}
	n.log = n.log.With(zap.String("path", path))
	return n
}

func (n *Node) validate() error {
	if n.c == nil {
		return ErrNilClient
	}
	if err := framework.ValidatePath(n.path); err != nil {
		return err
	}
	if n.path == "/" {
		return fmt.Errorf("%w: the root cannot be a node", ErrInvalidPath)
	}
	o := &n.o
	if o.ttlSet && (o.ttl < MinTTL || o.ttl > MaxTTL) {
		// Not "no TTL": a node the user asked to be reaped must be.
		return fmt.Errorf("%w: TTL %v is outside [%v, %v]", ErrInvalidOption, o.ttl, MinTTL, MaxTTL)
	}
	if o.ttl > 0 {
		switch {
		case !o.modeSet || o.mode == framework.Persistent:
			o.mode = framework.PersistentWithTTL
		case o.mode == framework.PersistentSequential:
			o.mode = framework.PersistentSequentialWithTTL
		case o.mode == framework.PersistentWithTTL || o.mode == framework.PersistentSequentialWithTTL:
		default:
			return fmt.Errorf("%w: TTL %v on a %v node", ErrInvalidOption, o.ttl, o.mode)
		}
	} else if o.mode == framework.PersistentWithTTL || o.mode == framework.PersistentSequentialWithTTL {
		return fmt.Errorf("%w: mode %v without WithTTL", ErrInvalidOption, o.mode)
	} else if o.expireAfterClose {
		return fmt.Errorf("%w: ExpireAfterClose without WithTTL", ErrInvalidOption)
	}
	if o.mode < framework.Persistent || o.mode > framework.PersistentSequentialWithTTL {
		return fmt.Errorf("%w: mode %v", ErrInvalidOption, o.mode)
	}
	if o.takeOver && o.failIfOwned {
		return fmt.Errorf("%w: TakeOver with FailIfOwned", ErrInvalidOption)
	}
	if o.takeOver && !o.mode.IsEphemeral() {
		return fmt.Errorf("%w: TakeOver on a %v node (one of another session is adopted anyway)", ErrInvalidOption, o.mode)
	}
	if o.clock == nil {
		o.clock = clock.Real
	}
	return nil
}

// Start makes the node and returns once it exists, made in the live
// session (Curator's start and waitForInitialCreate), and keeps it there
// until Close. If the path is held by an ephemeral node of another session
// (this process restarted before its old session expired, say), Start
// waits for that node to go, with a warning in the log; if ctx ends first,
// its error names the owner's session and matches ErrOwnedByOtherSession
// too. FailIfOwned makes Start return ErrOwnedByOtherSession at once
// instead, TakeOver take the node over. Errors that retrying cannot mend are returned at once:
// no permission (zk.ErrNoAuth), a missing parent with NoParentCreation
// (zk.ErrNoNode), ErrTTLUnsupported, ErrInvalidPath, ErrInvalidOption,
// ErrNilClient; connection problems are retried until ctx ends. On failure,
// or when ctx ends first (its error), Start leaves no node behind (for a
// node it may have made, a delete is retried in the background while the
// connection is down) and nothing running; Start may then be called again.
// A second Start of a running Node returns ErrAlreadyStarted; Start after
// Close, ErrClosed.
func (n *Node) Start(ctx context.Context) error {
	if n == nil {
		return ErrNilHandle
	}
	if n.err != nil {
		return fmt.Errorf("node %s: start: %w", n.path, n.err)
	}
	n.mu.Lock()
	switch {
	case n.closed:
		n.mu.Unlock()
		return fmt.Errorf("node %s: start: %w", n.path, ErrClosed)
	case n.run != nil:
		n.mu.Unlock()
		return fmt.Errorf("node %s: start: %w", n.path, ErrAlreadyStarted)
	}
	rctx, cancel := context.WithCancel(context.Background())
	r := &run{cancel: cancel, done: make(chan struct{}), first: make(chan struct{})}
	n.run = r
	n.known = known{}
	n.setStatusLocked(Event{State: Creating, Path: n.actual})
	n.mu.Unlock()
	go n.loop(rctx, r)

	var err error
	select {
	case <-r.first:
		return nil
	case <-r.done:
		err = r.err
		if err == nil {
			err = framework.ErrClosed
		}
	case <-ctx.Done():
		err = ctx.Err()
		n.mu.Lock()
		owner := n.waitOwner
		n.mu.Unlock()
		if owner != 0 {
			err = fmt.Errorf("%w while the path is held by the ephemeral node of session 0x%x (%w); "+
				"a dead process's node goes when its session expires: wait longer, or "+
				"use node.TakeOver (unsafe if that process lives) or node.FailIfOwned",
				err, owner, ErrOwnedByOtherSession)
		}
	}
	// Another look: registered at the same moment is success.
	select {
	case <-r.first:
		return nil
	default:
	}
	cctx, ccancel := n.c.CleanupContext(ctx)
	defer ccancel()
	_ = n.stop(cctx, r, true)
	n.mu.Lock()
	if n.closed {
		err = ErrClosed // Close ended the start
	}
	if n.run == r {
		n.run = nil
		if !n.closed {
			n.setStatusLocked(Event{State: Idle, Path: n.actual})
		}
	}
	n.mu.Unlock()
	return fmt.Errorf("node %s: start: %w", n.path, err)
}

// Path returns our node's path as the server named it (with the protected
// prefix and the sequence number), "" before the first create. It stays
// the same for the Node's life, and after Close.
func (n *Node) Path() string {
	if n == nil {
		return ""
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.actual
}

// Data returns the data the node carries, or will when made: the last
// SetData's (or New's) that was not refused for its size.
func (n *Node) Data() []byte {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.data)
}

// SetData sets the node's data: at once on the node if it is registered,
// and on every node made from now on (Curator's setData, which may be
// called before Start, CURATOR-485; a re-created node carries the latest
// data, CURATOR-241). It returns once the data is on the registered node,
// or at once if none is registered (it will be made with the data). The
// write is checked against the node's incarnation: it never changes a node
// that another session made at the path. If ctx ends first, its error is
// returned; the data is kept for the next create either way. After Close
// it returns ErrClosed and changes nothing.
//
// Data too large for the server's jute.maxbuffer is refused: SetData
// returns an error matching framework.ErrDataTooLarge and the Node keeps
// the data it had (Data says which), so that a refused value never keeps
// the node from being made again. While no node is registered the size
// cannot be checked before the next create: that create is refused, the
// Node logs a warning and makes the node with the last data that was not
// refused.
func (n *Node) SetData(ctx context.Context, data []byte) error {
	if n == nil {
		return ErrNilHandle
	}
	if n.err != nil {
		return fmt.Errorf("node %s: set data: %w", n.path, n.err)
	}
	if data == nil {
		data = []byte{}
	}
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return fmt.Errorf("node %s: set data: %w", n.path, ErrClosed)
	}
	n.data = slices.Clone(data)
	n.gen++
	n.mu.Unlock()
	if err := n.pushData(ctx); err != nil {
		return fmt.Errorf("node %s: set data: %w", n.path, err)
	}
	return nil
}

// Status returns the Node's current state.
func (n *Node) Status() Event {
	if n == nil {
		return Event{State: Closed}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.status
}

// Registered reports whether our node exists, made in the live session:
// the state is Registered and, for an ephemeral node, the session that
// owns it is alive as judged from the clock (framework's SessionAlive), so
// that Registered turns false when the session can no longer be trusted,
// before the server may delete the node. It does no I/O.
func (n *Node) Registered() bool {
	if n == nil {
		return false
	}
	st := n.Status()
	if st.State != Registered {
		return false
	}
	return !n.o.mode.IsEphemeral() || n.c.SessionAlive(st.Session)
}

// Listen registers fn for every change of state from now on (Registered,
// Recreating with its reason, Closed, ...), delivered in order, never
// dropped, on a goroutine of the listener's own. cancel unregisters it.
// Close ends the listeners after the Closed event; Listen after Close
// registers nothing (fn is never called) and returns a no-op cancel.
func (n *Node) Listen(fn func(Event)) (cancel func()) {
	if n == nil {
		return func() {}
	}
	return n.listen.Add(fn)
}

// Close stops keeping the node and deletes it, and returns once it is
// deleted and the Node's goroutines have ended. A create the Node has in
// flight (while it makes its node again, say) is waited for, never
// abandoned, so no node of ours is made after Close returns; if ctx ends
// first, the delete waits for that create's reply in the background. The
// delete is guaranteed:
// if the connection is down or ctx ends first, it goes on in the
// background (for an ephemeral node, only while the session that owns it
// lives: the node goes with it otherwise; for a persistent or TTL node,
// until the client closes) and Close returns ctx's or the connection's
// error. It only deletes a node this Node made (checked by its
// owner and incarnation), never another session's. A TTL node goes with
// its touch child, the child first; with ExpireAfterClose it is left for
// the server to delete within about 2×ttl (as Curator's
// PersistentTtlNode.close), its touches stopped. Close is idempotent;
// calls after the first return nil.
func (n *Node) Close(ctx context.Context) error {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	r := n.run
	n.mu.Unlock()
	var err error
	if r != nil && n.err == nil {
		err = n.stop(ctx, r, false)
	}
	if err == nil {
		err = n.awaitCleaning(ctx)
	}
	n.mu.Lock()
	n.setStatusLocked(Event{State: Closed, Path: n.actual})
	n.mu.Unlock()
	n.listen.Close()
	if err != nil {
		return fmt.Errorf("node %s: close: %w", n.path, err)
	}
	return nil
}

// stop ends the loop r and deletes what it made (with ExpireAfterClose,
// a TTL node only when failed says a Start failed). The loop ends only
// once its create in flight has its reply (see loop's wctx), so the
// delete comes after any create of ours: waited for here while ctx
// lasts, in the background after.
func (n *Node) stop(ctx context.Context, r *run, failed bool) error {
	r.cancel()
	select {
	case <-r.done:
	case <-ctx.Done():
		// The loop ends on its own at its next step; the node is then
		// deleted in the background, and Close waits for that.
		done := make(chan struct{})
		n.mu.Lock()
		prev := n.cleaning
		n.cleaning = done
		n.mu.Unlock()
		go func() {
			defer close(done)
			if prev != nil {
				<-prev
			}
			<-r.done
			bctx, cancel := context.WithTimeout(context.Background(), cleanupBudget)
			defer cancel()
			n.setCleanErr(done, n.remove(bctx, failed))
		}()
		return ctx.Err()
	}
	return n.remove(ctx, failed)
}

// awaitCleaning waits for a delete stop left to the background (a failed
// Start's, whose ctx had ended) and returns its error, or ctx's if ctx
// ends first (the delete goes on).
func (n *Node) awaitCleaning(ctx context.Context) error {
	n.mu.Lock()
	done := n.cleaning
	n.mu.Unlock()
	for done != nil {
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
		// A clean-up may hand over to a later one (stop's goes on
		// in removeLater's): wait for the last.
		n.mu.Lock()
		next := n.cleaning
		n.mu.Unlock()
		if next == done {
			break
		}
		done = next
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cleanErr
}

// setCleanErr records the end of the clean-up done: its error, unless a
// later clean-up has taken over (whose end decides).
func (n *Node) setCleanErr(done chan struct{}, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cleaning == done {
		n.cleanErr = err
	}
}

// setStatusLocked records and publishes a state; n.mu is held.
func (n *Node) setStatusLocked(ev Event) {
	if n.status.State == Closed {
		return
	}
	n.status = ev
	n.listen.Publish(ev)
}

// setStatus records and publishes ev unless it says nothing new: a failure
// that repeats (each attempt of a long outage, each wait on the same
// owner) is one event, so that a slow listener's queue does not grow with
// the number of attempts.
func (n *Node) setStatus(ev Event) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.status.State == ev.State && n.status.Czxid == ev.Czxid && n.status.Path == ev.Path && sameReason(n.status.Reason, ev.Reason) {
		return // nothing new
	}
	n.setStatusLocked(ev)
}

// sameReason reports whether two reasons say the same: the errors of two
// attempts are distinct values, so they are compared by what they say.
func sameReason(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a == b || a.Error() == b.Error()
}

// isNoNode reports a missing node.
func isNoNode(err error) bool { return errors.Is(err, zk.ErrNoNode) }
