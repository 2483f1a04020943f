package zkconn

import (
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/internal/clock"
)

// Wire is one go-zookeeper connection's layer: it wraps each socket the
// connection dials (Dialer) and keeps what the frames told it (the
// negotiated timeout, the acknowledgement clock, the replies to creates
// asked for), arms the Registry's watches on each, and writes the
// client's own requests between go-zookeeper's. The client makes a new
// one when it replaces the connection.
type Wire struct {
	handshake time.Duration // longest wait for a connect response, 0: go-zookeeper's
	clock     clock.Clock   // times the sends (the expiry's clock)
	// counts, if set, is the client's count of go-zookeeper's one-shot
	// watches: it says whether go-zookeeper may have watches to set
	// again on a new connection (gate.go), and is told of every
	// notification handed to go-zookeeper, as it is handed on, so that
	// it forgets the watches it fires in step with go-zookeeper's map
	// (counted later, on the event goroutine, a watch set just after the
	// event could be forgotten in its place).
	counts *Counts
	// pw, if set, is the client's registry of persistent watches, which
	// this Wire arms on each connection and feeds with their events.
	pw *Registry
	// retired is set once the client replaced this connection: the
	// persistent watches are armed on the new one only.
	retired   atomic.Bool
	timeoutMs int64     // negotiated session timeout, 0 until known
	lastAck   time.Time // send time of the last acknowledged request, zero until one
	lastPing  time.Time // send time of the last ping of the client's own (Keepalive)
	// gone is closed once the connection is abandoned: the host
	// provider's pause between redials ends then (PacedHosts).
	gone chan struct{}
	// unread counts the frames looked at and not understood (Unread);
	// log reports each at debug level.
	unread atomic.Int64
	log    *zap.Logger

	mu        sync.Mutex
	live      *Conn                  // the socket in use, nil between connections
	abandoned bool                   // the connection was closed: dial no more
	quitting  bool                   // gone is closed (quit or abandon)
	want      map[string]wanted      // creates to watch, by request path
	pending   map[int32]string       // xid -> request path, in flight
	got       map[string]CreateReply // request path -> reply
	// dialErrs is the last error of a dial to each server that failed,
	// in the order the servers were first tried (see dialErrors).
	dialErrs []serverDialError
}

// Config is what a Wire is made with.
type Config struct {
	// Handshake bounds the wait for a connect response (0:
	// go-zookeeper's own bound).
	Handshake time.Duration
	// Clock times the sends, for Acked and Keepalive (clock.Real if nil).
	Clock clock.Clock
	// Counts, if set, is the client's count of go-zookeeper's one-shot
	// watches.
	Counts *Counts
	// Registry, if set, is the client's registry of persistent watches.
	Registry *Registry
	// Log, if set, gets a debug line for each frame the Wire looks at and
	// does not understand (see Unread).
	Log *zap.Logger
}

// NewWire returns a Wire that has dialled nothing yet.
func NewWire(cfg Config) *Wire {
	clk := cfg.Clock
	if clk == nil {
		clk = clock.Real
	}
	log := cfg.Log
	if log == nil {
		log = zap.NewNop()
	}
	return &Wire{handshake: cfg.Handshake, clock: clk, counts: cfg.Counts, pw: cfg.Registry, log: log, gone: make(chan struct{}),
		want: map[string]wanted{}, pending: map[int32]string{}, got: map[string]CreateReply{}}
}

// Retire marks the Wire as replaced by the client's next one: it arms
// no persistent watch from now on (the new one does).
func (w *Wire) Retire() { w.retired.Store(true) }

// Gone returns a channel closed once the connection is given up (Quit or
// Abandon): a pause between redials should end then.
func (w *Wire) Gone() <-chan struct{} { return w.gone }

// Live returns the socket in use, nil between connections.
func (w *Wire) Live() *Conn {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.live
}

// Timeout returns the session timeout the server negotiated, in
// milliseconds, 0 until known.
func (w *Wire) Timeout() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.timeoutMs
}

// Acked returns the send time of the last request of ours that a server
// answered: the server heard from us then or later, so it cannot expire the
// session before that time plus the session timeout. Zero until one.
func (w *Wire) Acked() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastAck
}

// ack records that a request sent at t was answered.
func (w *Wire) ack(t time.Time) {
	w.mu.Lock()
	if t.After(w.lastAck) {
		w.lastAck = t
	}
	w.mu.Unlock()
}

// Dialer wraps d so that the frames of its connections are read into w.
func (w *Wire) Dialer(d zk.Dialer) zk.Dialer {
	return func(network, addr string, timeout time.Duration) (net.Conn, error) {
		conn, err := d(network, addr, timeout)
		if err != nil {
			w.dialFailed(addr, err)
			return nil, err
		}
		wc := &Conn{Conn: conn, w: w, watchesSet: make(chan struct{}), setWritten: make(chan struct{}), addr: addr}
		wc.dialAgain = func() (net.Conn, error) { return d(network, addr, timeout) }
		if w.pw != nil && !w.retired.Load() {
			// The server's version decides whether persistent watches
			// can be armed on it: asked before the connect request, so
			// the re-arm at the connect response knows.
			w.pw.dialed(wc)
		}
		if (w.counts == nil || !w.counts.any()) && !w.retired.Load() {
			// No watch to set again: no setWatches to wait for. A
			// retired connection's count is not its own any more (the
			// client reset it for the connection that replaced this
			// one), while go-zookeeper may still hold this one's
			// watches and set them again on a redial that resumes the
			// old session, as it is being closed: its replies wait.
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
func (w *Wire) dialFailed(addr string, err error) {
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

// DialErrors returns the last dial error of each server whose dial failed,
// nil if none did: Connect's error carries it, so that why no session was
// made (connection refused, no route, a TLS handshake) reaches the caller
// rather than only a debug log. The result unwraps to each error, so
// errors.Is(err, syscall.ECONNREFUSED) works.
func (w *Wire) DialErrors() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.dialErrs) == 0 {
		return nil
	}
	return dialErrors(slices.Clone(w.dialErrs))
}

// Abandon closes the connection's socket, if any, and refuses new ones:
// go-zookeeper's goroutines blocked reading a silent socket (it waits up
// to ten times the receive timeout for a connect response, minutes with a
// long session) end at once instead of when their read deadline passes.
func (w *Wire) Abandon() {
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

// Quit tells the host provider that the connection is being closed, so
// that go-zookeeper, if it is between connections, stops redialling and
// sees its Close at the next round (framework's hostprovider.go) instead of dialling
// at once, perhaps resuming a session the client has given up (after a
// client-side expiry the server may still hold it). A live socket stays
// open: Close may still send its close request on it.
func (w *Wire) Quit() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.quitLocked()
}

func (w *Wire) quitLocked() {
	if !w.quitting {
		w.quitting = true
		close(w.gone)
	}
}

// Unread returns how many frames the Wire looked at and did not
// understand: a frame shorter than a reply header, a notification whose
// event does not parse, a create reply whose path does not fit its frame.
// Each was handed on to go-zookeeper unchanged, and nothing was recorded
// from it (a create's czxid not captured is then read with a request).
func (w *Wire) Unread() int64 { return w.unread.Load() }

// notUnderstood records a frame looked at and not understood. It may be
// called with w.mu held.
func (w *Wire) notUnderstood(what string, payload []byte) {
	w.unread.Add(1)
	w.log.Debug("zkconn: frame not understood; handed on unchanged", zap.String("frame", what), zap.Int("bytes", len(payload)))
}
