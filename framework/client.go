package framework

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/internal/callgate"
	"github.com/gocurator/curator/internal/clock"
	"github.com/gocurator/curator/internal/fanout"
	"github.com/gocurator/curator/internal/mailbox"
	"github.com/gocurator/curator/internal/telemetry/clienttel"
	"github.com/gocurator/curator/internal/zkconn"
	"github.com/gocurator/curator/retry"
)

// Client is a ZooKeeper client with Curator's semantics: every operation runs
// under a retry policy, paths are namespaced, protected creation survives lost
// replies, deletes can be guaranteed, and connection states are reported to
// listeners. A Client is safe for concurrent use. Close it to end its session.
// A nil *Client is safe to call, like every handle of the library: its calls
// that would talk to ZooKeeper, and Close, return ErrNilClient, and it
// reports no session.
type Client struct {
	*core
	// prefix is what this client puts before every path: the chroot and
	// the namespace, "" for none. A view (WithNamespace) has its own.
	prefix string
	// namespace is the namespace with its leading slash, "" for none.
	namespace string
	// view marks a client made by WithNamespace, whose Close is refused:
	// the session belongs to the client it came from.
	view bool
}

// core is what a client and its namespace views share: the connection, the
// session, the listeners, the options (retry policy, ACLs, credentials)
// and every goroutine.
type core struct {
	opts    options
	log     *zap.Logger
	servers []string // what new connections dial; under mu
	chroot  string   // the connect string's chroot, "" for none
	// With the ensemble tracker (ensemble_tracker.go): hosts is the host
	// provider of the current connection, which the tracker updates, and
	// configVersion the version of the configuration servers came from.
	// Both under mu.
	hosts         *zkconn.TrackedHosts
	configVersion int64

	listeners *connstate.Listeners
	// events is unbounded: go-zookeeper's callback never blocks nor
	// drops (its own event channel holds six and drops the rest).
	events *mailbox.Mailbox[connEvent]
	tel    *clienttel.Instruments // instruments and spans (telemetry.go)

	// ctx is cancelled by Close; background work (guaranteed deletes,
	// find-and-delete of protected nodes, auth) runs under it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	h         *handle // current connection
	gen       uint64
	state     connstate.State
	session   int64         // live session id; 0 while there is none
	changed   fanout.Signal // notified at every state change
	first     chan struct{}
	expiry    clock.Timer // the client-side expiry watchdog
	closed    bool
	sess      *Session // the live session; nil while there is none
	guards    map[uint64]guard
	guardSeq  uint64
	tripped   []trippedGuard // guards to fire once c.mu is released
	closeOnce sync.Once
	watches   watchPumps // strip the prefix off watch events; under mu
	// set counts the watches set and not fired (see internal/zkconn, "The watch reset gate").
	set zkconn.Counts
	// pw is the registry of persistent watches (internal/zkconn).
	pw *zkconn.Registry

	// kick wakes the keepalive goroutine (keepalive.go) when
	// keepaliveTimer (under mu), armed on the client's clock, says a ping
	// may be due.
	kick           chan struct{}
	keepaliveTimer clock.Timer
}

// handle is one go-zookeeper connection. The client replaces it when it
// declares a session lost on its own, so that Lost always means a new session.
type handle struct {
	conn *zk.Conn
	// loopEvents is go-zookeeper's event channel, unread (events come
	// through the callback); it is closed when its connection loop ends.
	loopEvents <-chan zk.Event
	ready      chan struct{} // closed once credentials are added, or refused
	wire       *zkconn.Wire  // what its frames told us
	// authErr, written before ready closes, wraps ErrAuthFailed if the
	// server refused the credentials: operations on this connection then
	// fail with it rather than run without them.
	authErr error
	// replies holds Close back while go-zookeeper calls that read their
	// reply unguarded are in flight (create.go).
	replies callgate.Gate
}

// Connect connects to the ZooKeeper servers of connectString,
// host:port[,host:port...][/chroot], and returns once a session is
// established (and its credentials added). If ctx ends first, Connect
// returns an error wrapping ctx's error; if the connection timeout
// (WithConnectionTimeout) passes first, one wrapping ErrConnectTimeout.
// Either error also wraps the last dial error of each server that could not
// be reached (errors.Is(err, syscall.ECONNREFUSED) works), and nothing is
// left running.
func Connect(ctx context.Context, connectString string, opts ...Option) (*Client, error) {
	if ctx == nil {
		return nil, invalid("nil context")
	}
	o := defaultOptions()
	for i, opt := range opts {
		if opt == nil {
			return nil, invalid("option %d is nil", i)
		}
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	servers, chroot, err := parseConnectString(connectString)
	if err != nil {
		return nil, err
	}
	return connectOptions(ctx, connectString, servers, chroot, o)
}

// NewSession connects another client like c, with a session of its own:
// the same servers (as c dials them now), chroot, namespace (a view's
// own), options and credentials. It blocks as Connect does; the caller
// closes the client. A recipe uses it to spread a burst of reads over
// several sessions, each of which the server serves in order.
func (c *Client) NewSession(ctx context.Context) (*Client, error) {
	if c == nil {
		return nil, ErrNilClient
	}
	if ctx == nil {
		return nil, invalid("nil context")
	}
	if c.ctx.Err() != nil {
		return nil, fmt.Errorf("curator: new session: %w", ErrClosed)
	}
	c.mu.Lock()
	servers := slices.Clone(c.servers)
	c.mu.Unlock()
	o := c.opts
	o.namespace = c.namespace
	return connectOptions(ctx, strings.Join(servers, ",")+c.chroot, servers, c.chroot, o)
}

// connectOptions is Connect once the options and the connect string are read.
func connectOptions(ctx context.Context, connectString string, servers []string, chroot string, o options) (*Client, error) {
	for _, a := range o.auth {
		// A server closes the connection on a request over its
		// jute.maxbuffer, so credentials over it could never be added.
		if err := checkRequestSize("auth", authSize(a), len(a.auth), o.juteMaxBuffer); err != nil {
			return nil, invalid("credentials for scheme %q: %w", a.scheme, err)
		}
	}
	c := &Client{
		core: &core{
			opts:      o,
			log:       o.logger.Named("curator"),
			servers:   servers,
			chroot:    chroot,
			listeners: connstate.NewListeners(),
			events:    mailbox.New[connEvent](),
			tel:       newClientTelemetry(&o),
			first:     make(chan struct{}),
			kick:      make(chan struct{}, 1),
		},
		prefix:    chroot + o.namespace,
		namespace: o.namespace,
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.pw = zkconn.NewRegistry(c.log, &c.set, c.liveWire)
	c.mu.Lock()
	c.gen = 1
	h, err := c.dial(c.gen)
	if err != nil {
		c.mu.Unlock()
		c.cancel()
		c.listeners.Close()
		return nil, fmt.Errorf("curator: connect %q: %w", connectString, err)
	}
	c.h = h
	c.mu.Unlock()
	c.wg.Add(2)
	go c.run()
	go c.runKeepalive()
	if o.ensemble.track {
		c.wg.Add(1)
		go c.trackEnsemble()
	}

	wctx, cancel := context.WithTimeout(ctx, o.connectionTimeout)
	defer cancel()
	select {
	case <-c.first:
		select {
		case <-h.ready:
			if h.authErr == nil {
				return c, nil
			}
			// The server refused the credentials: a client without
			// them must not be handed out.
			_ = c.Close()
			return nil, fmt.Errorf("curator: connect %q: %w", connectString, h.authErr)
		case <-wctx.Done():
		}
	case <-wctx.Done():
	}
	err = connectFailed(ctx, connectString, o.connectionTimeout, h.wire.DialErrors())
	_ = c.Close()
	return nil, err
}

// connectFailed is Connect's error when no session was made in time: ctx's
// error if the caller's ctx ended, ErrConnectTimeout if the connection
// timeout passed first, followed by the last dial error of each server
// that could not be reached (dials nil if none failed).
func connectFailed(ctx context.Context, connectString string, timeout time.Duration, dials error) error {
	var err error
	if ctxErr := ctx.Err(); ctxErr != nil {
		err = fmt.Errorf("curator: connect %q: %w", connectString, ctxErr)
	} else {
		err = fmt.Errorf("%w: no session with %q within %v", ErrConnectTimeout, connectString, timeout)
	}
	if dials == nil {
		return err
	}
	return fmt.Errorf("%w: %w", err, dials)
}

// dial makes a new go-zookeeper connection; its events are tagged with gen.
// Called with c.mu held.
//
// The credentials of WithAuth are added by a goroutine of the client before
// any operation runs on the connection (h.ready). If the server refuses
// them (an unknown scheme, say: the server answers AUTHFAILED and closes the
// connection, and go-zookeeper then reconnects the same session without
// them), h.authErr records it and is logged at Error: Connect fails with it
// for the first connection; for a later one (the new session after a
// client-side expiry) every operation fails with it, as nothing may run
// without the credentials. go-zookeeper re-adds the credentials itself when
// it reconnects a session, and drops the connection if that fails, so
// nothing runs without them there either.
func (c *Client) dial(gen uint64) (*handle, error) {
	h := &handle{ready: make(chan struct{}), wire: zkconn.NewWire(zkconn.Config{
		Handshake: handshakeTimeout(c.opts.sessionTimeout),
		Clock:     c.opts.clock,
		Counts:    &c.set,
		Registry:  c.pw,
		Log:       c.log,
	})}
	dialer := c.opts.dialer
	if dialer == nil {
		dialer = net.DialTimeout
	}
	// go-zookeeper's default provider, unless the ensemble tracker is on:
	// then one the tracker updates when the ensemble changes, so that a
	// reconnection, and a new connection, start from the latest members.
	var hosts zk.HostProvider = zk.NewDNSHostProvider()
	if c.opts.ensemble.track {
		c.hosts = &zkconn.TrackedHosts{}
		hosts = c.hosts
	}
	// Either way paced by the client rather than by go-zookeeper's
	// second-long sleep between rounds (zkconn.PacedHosts). The pauses are
	// the network's business, on the wall clock: the client's clock
	// (WithClock in tests) times the expiry and the keepalive.
	w, asked := h.wire, c.opts.sessionTimeout
	paced := &zkconn.PacedHosts{HostProvider: hosts, Clock: clock.Real, Gone: w.Gone(), Timeout: func() time.Duration {
		if ms := w.Timeout(); ms > 0 {
			return time.Duration(ms) * time.Millisecond
		}
		return asked
	}}
	conn, loopEvents, err := zk.Connect(c.servers, c.opts.sessionTimeout,
		zk.WithHostProvider(paced),
		zk.WithDialer(h.wire.Dialer(dialer)),
		zk.WithLogger(zkLogger{c.log.Named("zk")}),
		zk.WithLogInfo(false),
		zk.WithEventCallback(func(ev zk.Event) { c.events.Send(connEvent{gen: gen, ev: ev}) }),
		// go-zookeeper encodes every request into this buffer and fails
		// one that does not fit (zk.ErrShortBuffer) without sending it:
		// sized to jute.maxbuffer, it refuses what the client's own
		// checks do not see (requests made on Conn(), say), instead of
		// the server dropping the connection.
		zk.WithMaxConnBufferSize(sendBufferSize(c.opts.juteMaxBuffer)),
	)
	if err != nil {
		return nil, err
	}
	h.conn, h.loopEvents = conn, loopEvents
	if len(c.opts.auth) == 0 {
		close(h.ready)
		return h, nil
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer close(h.ready)
		for _, a := range c.opts.auth {
			err := retry.Do(c.ctx, retry.Forever(100*time.Millisecond), func(context.Context) error {
				if c.replaced(h) {
					// The connection was given up; the new one adds
					// its own credentials.
					return errReplaced
				}
				return conn.AddAuth(a.scheme, a.auth)
			})
			switch {
			case err == nil:
				continue
			case errors.Is(err, errReplaced), c.isClosed():
				return
			}
			h.authErr = fmt.Errorf("%w: scheme %q: %w", ErrAuthFailed, a.scheme, err)
			c.log.Error("the server refused the credentials; operations on this session fail with ErrAuthFailed",
				zap.String("scheme", a.scheme), zap.Uint64("connection", gen), zap.Error(err))
			return
		}
	}()
	return h, nil
}

// sendBufferSize is the size of go-zookeeper's send buffer for a
// jute.maxbuffer of limit: a packet's 4-byte length and limit bytes, but no
// less than go-zookeeper needs to re-register watches after a reconnect
// (batches of up to 128 KiB).
func sendBufferSize(limit int) int { return max(limit, (128+1)<<10) + 4 }

var errReplaced = errors.New("curator: connection replaced")

// replaced reports whether h is no longer the client's connection.
func (c *Client) replaced(h *handle) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.h != h && c.h != nil
}

// Close ends the session, so its ephemeral nodes go at once, and stops
// every goroutine of the client (background deletes included). Before the
// session ends, every hold of every recipe on the client ends (its Done
// closes, its Err is ErrClosed; see Guard), and every waiting call returns
// ErrClosed.
// Close waits for the client's goroutines, except a state listener that is
// running at the time: Close may be called from a listener, which then
// ends once it returns. Calls made after Close return ErrClosed. Close is
// idempotent and safe for concurrent use. On a namespace view (see
// WithNamespace) Close returns ErrCloseView and changes nothing: the
// session belongs to the client the view came from.
func (c *Client) Close() error {
	if c == nil {
		return ErrNilClient
	}
	if c.view {
		return ErrCloseView
	}
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		connected := c.state.IsConnected()
		c.stopExpiryLocked()
		c.stopKeepaliveLocked()
		h := c.h
		guards := c.guards
		c.guards = nil
		c.mu.Unlock()
		// Holds end before the session does, so a holder is told before
		// anyone else can be given its lock.
		for _, g := range guards {
			g.f(true, 0)
		}
		// Done closes before the session's Done, so whoever sees the
		// session end can tell Close from a loss by looking at Done.
		c.cancel()
		c.mu.Lock()
		c.endSessionLocked()
		c.mu.Unlock()
		c.closeConn(h, connected)
		c.wg.Wait()
		c.listeners.Close()
		c.tel.Close()
		c.log.Debug("closed")
	})
	return nil
}

// closeConn closes a go-zookeeper connection and its socket. A connected
// one is closed gracefully first (the server ends the session at once, and
// its ephemeral nodes go); go-zookeeper waits up to a second for that.
// Without a connection there is nobody to tell, so the socket goes first
// and go-zookeeper's Close returns at once. Either way no goroutine of
// go-zookeeper is left reading a silent socket.
//
// Before either, the calls that read their reply unguarded (see replyGateOf)
// return: at their reply, which a connected server sends within a round
// trip, or, past replyDrain, once the socket closed fails them.
func (c *Client) closeConn(h *handle, connected bool) {
	// Whatever happens below, a connection being closed dials no more.
	h.wire.Quit()
	if connected && h.replies.Drain(replyDrain) {
		h.conn.Close()
		h.wire.Abandon()
		return
	}
	if connected {
		c.log.Debug("closing: no reply within the drain bound; closing the socket first", zap.Duration("bound", replyDrain))
	}
	// Closing the socket first lets go-zookeeper's loop, stuck reading it,
	// reach its pause between dials, which its Close ends at once. But its
	// Close also waits up to a second for the reply to a close request,
	// and when the loop ends before that request is queued (a race inside
	// go-zookeeper) nobody answers it. So wait for Close, or for the loop's
	// end (its event channel closes then), whichever comes first; in the
	// second case the goroutine inside go-zookeeper's Close ends on its own
	// within the second, holding nothing. The socket closed also fails
	// the calls in flight that hold the gate.
	h.wire.Abandon()
	h.replies.Drain(replyDrain)
	closed := make(chan struct{})
	closing.Add(1)
	go func() {
		defer closing.Done()
		defer close(closed)
		h.conn.Close()
	}()
	loopEnded := make(chan struct{})
	go func() {
		defer close(loopEnded)
		for range h.loopEvents {
		}
	}()
	select {
	case <-closed:
	case <-loopEnded:
	}
}

// replyDrain bounds closeConn's wait for the replies of calls in flight,
// as go-zookeeper's Close bounds its wait for the close reply.
const replyDrain = time.Second

// closing counts the goroutines closeConn leaves in go-zookeeper's Close
// (each ends within a second): tests wait for them before looking for
// leaked goroutines.
var closing sync.WaitGroup

// Done returns a channel that is closed when Close is called.
func (c *Client) Done() <-chan struct{} {
	if c == nil {
		return fanout.Closed()
	}
	return c.ctx.Done()
}

// Listen registers fn for every state change from now on. States are
// delivered in order, never dropped, on a goroutine of the listener's own, so
// a slow listener blocks nobody. The returned cancel unregisters fn.
func (c *Client) Listen(fn func(connstate.State)) (cancel func()) {
	if c == nil {
		return func() {}
	}
	return c.addListener(fn)
}

// State returns the current connection state.
func (c *Client) State() connstate.State {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// StateChanged returns a channel that is closed at the next state change.
// Read State after it closes.
func (c *Client) StateChanged() <-chan struct{} {
	if c == nil {
		return fanout.Closed()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed.C()
}

// SessionID returns the id of the live session, or 0 while there is none
// (after Lost until the next session, and after Close).
func (c *Client) SessionID() int64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// SessionTimeout returns the session timeout negotiated with the server, or
// the requested one until a server has answered.
func (c *Client) SessionTimeout() time.Duration {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.negotiatedTimeoutLocked()
}

// Conn returns the current go-zookeeper connection, an escape hatch: paths
// on it are not namespaced and calls on it are not retried. The client
// replaces the connection after it declares a session lost.
func (c *Client) Conn() *zk.Conn {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.h.conn
}

// Logger returns the client's logger, for recipes to name sub-loggers from.
func (c *Client) Logger() *zap.Logger {
	if c == nil {
		return zap.NewNop()
	}
	return c.opts.logger
}

// ErrorPolicy returns the policy that decides which states end lock holds.
func (c *Client) ErrorPolicy() connstate.ErrorPolicy {
	if c == nil {
		return connstate.StandardPolicy{}
	}
	return c.opts.errorPolicy
}

// RetryPolicy returns the policy operations retry under.
func (c *Client) RetryPolicy() retry.Policy {
	if c == nil {
		return defaultOptions().retryPolicy
	}
	return c.opts.retryPolicy
}

// DefaultData returns a copy of the data Create writes when given nil.
func (c *Client) DefaultData() []byte {
	if c == nil {
		return nil
	}
	return append([]byte{}, c.opts.defaultData...)
}

// Namespace returns the namespace (without leading slash), "" if none.
func (c *Client) Namespace() string {
	if c == nil {
		return ""
	}
	if c.namespace == "" {
		return ""
	}
	return c.namespace[1:]
}

// BlockUntilConnected waits until the client is connected (Connected,
// Reconnected or ReadOnly). It returns ctx's error if ctx ends first and
// ErrClosed if the client is closed.
func (c *Client) BlockUntilConnected(ctx context.Context) error {
	if c == nil {
		return ErrNilClient
	}
	if ctx == nil {
		return invalid("nil context")
	}
	for {
		c.mu.Lock()
		closed, st, ch := c.closed, c.state, c.changed.C()
		c.mu.Unlock()
		switch {
		case closed:
			return ErrClosed
		case st.IsConnected():
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-c.ctx.Done():
			return ErrClosed
		}
	}
}

func (c *Client) isClosed() bool {
	select {
	case <-c.ctx.Done():
		return true
	default:
		return false
	}
}
