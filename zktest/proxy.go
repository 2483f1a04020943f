package zktest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocurator/curator/internal/zkwire"
)

// Proxy is a TCP proxy in front of a ZooKeeper server that injects faults:
// Cut partitions the clients behind it loudly (their connections close at
// once), BlackHole silently (every byte is dropped and nothing closes, as in
// a real network partition), Restore ends either, and LoseNextCreateReply
// loses the reply to one create (LoseNextSetReply, LoseNextDeleteReply,
// LoseNextMultiReply, LoseNextSetACLReply and LoseNextReconfigReply to one
// set, delete, transaction, ACL change or reconfiguration). SetDelay models the distance of a network:
// a one-way latency in each direction. Its methods are safe for concurrent
// use.
type Proxy struct {
	target string
	delay  atomic.Int64 // one-way delay in nanoseconds; 0 forwards at once
	ln     net.Listener
	ctx    context.Context // ends on Close, cancelling dials to target
	cancel context.CancelFunc
	wg     sync.WaitGroup // the accept loop and every connection goroutine

	mu        sync.Mutex
	conns     map[*proxyConn]struct{}
	cut       bool
	blackHole bool
	closed    bool
	armed     []*lostReply // the pending lost-reply faults, one per kind
}

// proxyDialTimeout bounds connecting to the target.
const proxyDialTimeout = 5 * time.Second

// ListenProxy starts a proxy on a free loopback port that forwards every
// connection to target (host:port). It returns once it listens; the caller
// must Close it.
func ListenProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("zktest: proxy to %s: listen: %w", target, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{
		target: target,
		ln:     ln,
		ctx:    ctx,
		cancel: cancel,
		conns:  make(map[*proxyConn]struct{}),
	}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's address, 127.0.0.1:port: give it to clients instead
// of the server's.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Target is the address the proxy forwards to.
func (p *Proxy) Target() string { return p.target }

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		conn, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: give it a moment.
			select {
			case <-p.ctx.Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		p.mu.Lock()
		if p.cut || p.closed {
			p.mu.Unlock()
			conn.Close()
			continue
		}
		// A connection accepted in a black hole is never dialled through:
		// it is drained until Restore closes it.
		c := &proxyConn{p: p, client: conn, held: p.blackHole, lost: p.blackHole}
		p.conns[c] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go c.run()
	}
}

// Cut closes every connection through the proxy at once and, until
// Restore, closes new ones as soon as they are accepted: clients see a
// disconnect at once rather than a hang, and cannot reconnect through the
// proxy. Sessions live on in the server until they time out. Cut does not
// block.
func (p *Proxy) Cut() {
	p.mu.Lock()
	p.cut = true
	conns := p.liveLocked()
	p.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
}

// BlackHole partitions the clients behind the proxy silently, as a real
// network partition does: from now until Restore every byte in both
// directions on every connection is read and discarded, never forwarded,
// and no connection is closed by the proxy (no FIN, no RST), not even when
// the other side closes its end. New connections are accepted but hear
// nothing and get nothing forwarded, like a dropped SYN: the client only
// finds out by its own timeouts. The server, hearing nothing either,
// expires the sessions after their timeout. A frame already being forwarded
// when BlackHole is called may still arrive. While a Cut is in force it
// still refuses new connections. BlackHole does not block.
func (p *Proxy) BlackHole() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.blackHole = true
}

// Restore ends a Cut and a BlackHole: new connections are forwarded again,
// and so are open connections that lost nothing. ZooKeeper's protocol cannot
// survive bytes lost in the middle of a stream, so Restore closes every
// connection that lost bytes in the black hole, or whose other side closed
// meanwhile, or that was accepted during it; their clients reconnect (to
// their session if it has not expired). Restore does not block.
func (p *Proxy) Restore() {
	p.mu.Lock()
	p.cut = false
	p.blackHole = false
	var lost []*proxyConn
	for c := range p.conns {
		if c.lost {
			lost = append(lost, c)
		}
	}
	p.mu.Unlock()
	for _, c := range lost {
		c.close()
	}
}

// SetDelay makes the proxy hold every chunk of bytes it reads, in either
// direction and on every connection (open or new), for oneWay before it
// passes the chunk on, as a network link of that latency does: a request
// and its reply take at least 2*oneWay longer, so the round trip grows by
// 2*oneWay. Order is kept (a chunk never overtakes one read before it), and
// throughput is not limited: chunks wait in a queue per direction while the
// proxy goes on reading, so a hundred pipelined requests take about one
// round trip, not a hundred. A chunk is released at its read time plus the
// delay in force when it was read, never earlier; on Linux a precise sleep
// keeps it within tens of microseconds after that, elsewhere Go's timers
// may add up to about a millisecond.
//
// SetDelay(0), the default, forwards at once; chunks already queued still
// leave in order. A negative delay counts as 0. The delay composes with the
// other faults: Cut closes connections at once and drops what is queued;
// in a BlackHole, queued chunks that fall due are dropped too (what is in
// flight is lost in a partition), which marks the connection as one that
// Restore closes; a side that closes is passed on after the bytes it sent
// before. SetDelay does not block.
func (p *Proxy) SetDelay(oneWay time.Duration) {
	p.delay.Store(int64(max(oneWay, 0)))
}

// Delay returns the one-way delay set by SetDelay.
func (p *Proxy) Delay() time.Duration { return time.Duration(p.delay.Load()) }

// LoseNextCreateReply arms the lost-reply fault: the next create request
// (create, create2, createContainer or createTTL; not multi) from any
// client reaches the server, which applies it, but the server's reply is
// dropped and both sides of that connection are closed, so the client sees
// a connection loss for a create that succeeded. The returned channel is
// closed once the fault has fired. Calling it again before it fires returns
// the same channel. If the connection carrying the create dies before the
// reply arrives, the fault is armed again for the next create. It does not
// block.
func (p *Proxy) LoseNextCreateReply() <-chan struct{} { return p.arm(lostCreate) }

// LoseNextSetReply is LoseNextCreateReply for the next setData request:
// the server applies it, the client sees a connection loss.
func (p *Proxy) LoseNextSetReply() <-chan struct{} { return p.arm(lostSet) }

// LoseNextDeleteReply is LoseNextCreateReply for the next delete request.
func (p *Proxy) LoseNextDeleteReply() <-chan struct{} { return p.arm(lostDelete) }

// LoseNextMultiReply is LoseNextCreateReply for the next multi
// (transaction) request.
func (p *Proxy) LoseNextMultiReply() <-chan struct{} { return p.arm(lostMulti) }

// LoseNextSetACLReply is LoseNextCreateReply for the next setACL request.
func (p *Proxy) LoseNextSetACLReply() <-chan struct{} { return p.arm(lostSetACL) }

// LoseNextReconfigReply is LoseNextCreateReply for the next reconfig
// request (dynamic reconfiguration of an ensemble).
func (p *Proxy) LoseNextReconfigReply() <-chan struct{} { return p.arm(lostReconfig) }

// FailNextExistsReply makes the reply to the next exists request reach the
// client with ZooKeeper error code code (such as -118, "session moved", or
// -112, "session expired") in place of the server's answer, its body
// dropped. Unlike the lost-reply faults the connection stays open. The
// returned channel is closed once the rewritten reply has been passed on.
func (p *Proxy) FailNextExistsReply(code int32) <-chan struct{} {
	return p.armCode(lostExists, code)
}

// lostKind is the kind of request a lost-reply fault is armed for.
type lostKind int

const (
	lostCreate lostKind = iota
	lostSet
	lostDelete
	lostMulti
	lostSetACL
	lostReconfig
	lostExists
)

// matches reports whether a request of opcode op carries a fault of kind k.
func (k lostKind) matches(op int32) bool {
	switch k {
	case lostCreate:
		return isCreate(op)
	case lostSet:
		return op == zkwire.OpSetData
	case lostDelete:
		return op == zkwire.OpDelete
	case lostMulti:
		return op == zkwire.OpMulti
	case lostSetACL:
		return op == zkwire.OpSetACL
	case lostReconfig:
		return op == zkwire.OpReconfig
	case lostExists:
		return op == zkwire.OpExists
	}
	return false
}

// lostReply is one armed lost-reply fault.
type lostReply struct {
	kind lostKind
	// code, when not 0, is the error code the reply is rewritten to
	// carry instead of being lost.
	code  int32
	fired chan struct{}
}

// arm arms a fault of kind k, or returns the one already armed.
func (p *Proxy) arm(k lostKind) <-chan struct{} { return p.armCode(k, 0) }

// armCode arms a fault of kind k whose reply carries error code code
// instead of being lost (0: lost), or returns the one already armed.
func (p *Proxy) armCode(k lostKind, code int32) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range p.armed {
		if f.kind == k {
			return f.fired
		}
	}
	f := &lostReply{kind: k, code: code, fired: make(chan struct{})}
	p.armed = append(p.armed, f)
	return f.fired
}

// takeArmed disarms the lost-reply fault for a request of opcode op, for
// the connection that will carry it, returning it, or nil when nothing is
// armed for op.
func (p *Proxy) takeArmed(op int32) *lostReply {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, f := range p.armed {
		if f.kind.matches(op) {
			p.armed = append(p.armed[:i], p.armed[i+1:]...)
			return f
		}
	}
	return nil
}

// forget drops a closed connection; unfired, a fault it carried is armed
// again.
func (p *Proxy) forget(c *proxyConn, unfired *lostReply) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
	if unfired == nil || p.closed {
		return
	}
	for _, f := range p.armed {
		if f.kind == unfired.kind {
			return
		}
	}
	p.armed = append(p.armed, unfired)
}

func (p *Proxy) liveLocked() []*proxyConn {
	conns := make([]*proxyConn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	return conns
}

// Close stops listening, closes every connection and blocks until all the
// proxy's goroutines have ended. An armed fault that has not fired never
// closes its channel. It is safe to call more than once.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	conns := p.liveLocked()
	p.mu.Unlock()
	p.cancel()
	err := p.ln.Close()
	for _, c := range conns {
		c.close()
	}
	p.wg.Wait()
	if err != nil {
		return fmt.Errorf("zktest: close proxy %s: %w", p.Addr(), err)
	}
	return nil
}
