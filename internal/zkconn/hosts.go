package zkconn

import (
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/internal/clock"
)

// TrackedHosts is the go-zookeeper HostProvider of a connection of a
// client with the ensemble tracker on (framework's WithEnsembleTracker): the servers to try, in a random
// order, which the tracker replaces when the ensemble changes. The live
// connection is kept; the next (re)connection picks from the new list.
// Unlike go-zookeeper's DNSHostProvider it keeps host names as they are,
// so each dial resolves them afresh (a configured DNS name is followed,
// not pinned to the address it had at connect time, CURATOR-638/664).
type TrackedHosts struct {
	mu      sync.Mutex
	servers []string
	curr    int // index of the server last returned by Next; -1 for none
	last    int // index of the server last connected to; -1 for none
}

// Init is called by go-zookeeper's Connect with the servers to start from.
func (h *TrackedHosts) Init(servers []string) error {
	h.Update(servers)
	return nil
}

// Update replaces the servers; the next Next starts a round of the new
// list.
func (h *TrackedHosts) Update(servers []string) {
	s := slices.Clone(servers)
	rand.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	h.mu.Lock()
	defer h.mu.Unlock()
	h.servers = s
	h.curr, h.last = -1, -1
}

// Len returns the number of servers.
func (h *TrackedHosts) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.servers)
}

// Next returns the next server to try; retryStart is true once every
// server has been tried since the last connection (PacedHosts, which
// wraps it, pauses then).
func (h *TrackedHosts) Next() (server string, retryStart bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.curr = (h.curr + 1) % len(h.servers)
	retryStart = h.curr == h.last
	if h.last == -1 {
		h.last = 0
	}
	return h.servers[h.curr], retryStart
}

// Connected records a successful connection.
func (h *TrackedHosts) Connected() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last = h.curr
}

// PacedHosts is the go-zookeeper HostProvider of every connection: it
// wraps the provider that picks the servers (go-zookeeper's
// DNSHostProvider, or TrackedHosts with the ensemble tracker) and paces
// the redials itself. go-zookeeper's connection loop sleeps a whole second
// whenever Next says a round of the servers starts again (retryStart),
// which, with one server, is before every redial: a client whose
// connection was cut for 2.2 s of a 4 s session redialled 3 s into the
// cut, and too late for its session half the time .
// Next reports retryStart only once the connection is given up (so that
// go-zookeeper's loop looks at its Close); between rounds it pauses as
// RedialPause says: the first round at once, the next ones tens of
// milliseconds apart, so a refused server is not dialled in a busy loop.
//
// Unlike go-zookeeper's pause, this one does not fail the requests queued
// while disconnected (ErrNoServer): they wait for the next connection, as
// the Java client's do, or for their caller's ctx. The client's own
// requests do not queue there: they wait for a connection first
// (waitConnected).
type PacedHosts struct {
	zk.HostProvider
	// Clock times the pauses.
	Clock clock.Clock
	// Timeout is the session timeout the pauses are cut to (RedialPause).
	Timeout func() time.Duration
	// Gone is closed once the connection is given up (Conn.Gone).
	Gone <-chan struct{}

	mu     sync.Mutex
	rounds int // rounds of the servers begun since the last connection
}

// Next returns the next server to dial, after the pause that a new round
// of the servers takes. It reports retryStart, which makes go-zookeeper
// check whether it is closed (and pause a second if not), only once the
// connection is given up.
func (p *PacedHosts) Next() (server string, retryStart bool) {
	server, retryStart = p.HostProvider.Next()
	if !retryStart {
		return server, false
	}
	p.mu.Lock()
	round := p.rounds
	p.rounds++
	p.mu.Unlock()
	if d := jitter(RedialPause(round, p.Timeout())); d > 0 {
		wake := make(chan struct{})
		t := p.Clock.AfterFunc(d, func() { close(wake) })
		select {
		case <-wake:
		case <-p.Gone:
			t.Stop()
		}
	}
	select {
	case <-p.Gone:
		return server, true
	default:
		return server, false
	}
}

// Connected records a successful connection: the next round of the
// servers, after a disconnection, starts at once.
func (p *PacedHosts) Connected() {
	p.HostProvider.Connected()
	p.mu.Lock()
	p.rounds = 0
	p.mu.Unlock()
}

// Bounds of the pause between rounds of redials (RedialPause).
const (
	redialFirst = 10 * time.Millisecond  // the second round's pause; doubled each round
	redialMin   = 10 * time.Millisecond  // the least the longest pause may be
	redialMax   = 250 * time.Millisecond // the most it may be
	// redialDivisor cuts the longest pause to this fraction of the
	// session timeout: a pause is part of what a cut costs before the
	// client-side deadline (see keepaliveDivisor).
	redialDivisor = 80
)

// RedialPause is the pause before round round (0 for the first) of
// redials since the last connection, for a session of timeout: none for
// the first (a cut that just ended is redialled at once), then 10 ms,
// doubling, up to an eightieth of the timeout within [10 ms, 250 ms]
// (50 ms for a 4 s session, 250 ms from 20 s up).
func RedialPause(round int, timeout time.Duration) time.Duration {
	if round <= 0 {
		return 0
	}
	longest := min(max(timeout/redialDivisor, redialMin), redialMax)
	return min(redialFirst<<min(round-1, 16), longest)
}

// jitter spreads d over [d/2, d], so that clients cut off together do not
// redial in step.
func jitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d-d/2+1)
}
