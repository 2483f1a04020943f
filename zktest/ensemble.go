package zktest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Ensemble is a quorum of ZooKeeper servers on loopback. Its methods are
// safe for concurrent use.
type Ensemble struct {
	opts options
	inst installation

	mu      sync.Mutex // guards servers
	servers []*Server
}

// LaunchEnsemble starts n servers (ids 1..n) configured as one ensemble and
// blocks until every one of them serves and one is leader, or the start
// timeout passes. On failure it leaves nothing running and nothing on disk
// (unless WithKeepFiles). The caller must Close the ensemble.
func LaunchEnsemble(n int, opts ...Option) (*Ensemble, error) {
	if n < 1 {
		return nil, fmt.Errorf("zktest: ensemble of %d servers", n)
	}
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	inst, err := findInstallation()
	if err != nil {
		return nil, err
	}
	return retryPorts(func() (*Ensemble, error) { return launchEnsemble(inst, o, n) })
}

func launchEnsemble(inst installation, o options, n int) (*Ensemble, error) {
	ports, err := freePorts(3 * n)
	if err != nil {
		return nil, err
	}
	peers := make([]peer, n)
	for i := range peers {
		peers[i] = peer{id: i + 1, clientPort: ports[3*i], quorumPort: ports[3*i+1], electionPort: ports[3*i+2]}
	}
	if n == 1 && !o.reconfig {
		// One server is standalone, as Launch makes it.
		peers = peers[:0:0]
	}
	e := &Ensemble{opts: o, inst: inst}
	for i := range n {
		self := peer{id: i + 1, clientPort: ports[3*i], quorumPort: ports[3*i+1], electionPort: ports[3*i+2]}
		s, err := newServer(inst, o, self, peers)
		if err != nil {
			e.Close()
			return nil, err
		}
		e.servers = append(e.servers, s)
	}
	// Start every JVM before waiting: members only serve once a quorum
	// of them runs.
	procs := make([]*process, n)
	for i, s := range e.servers {
		if procs[i], err = s.start(); err != nil {
			e.Close()
			return nil, err
		}
	}
	deadline := time.Now().Add(o.startTimeout)
	for i, s := range e.servers {
		if err := s.awaitServing(procs[i], deadline); err != nil {
			e.Close()
			return nil, err
		}
	}
	return e, nil
}

// Servers returns the members in id order; index i holds id i+1 (servers
// added by AddServer included, whether or not a reconfiguration made them
// members).
func (e *Ensemble) Servers() []*Server {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]*Server(nil), e.servers...)
}

// AddServer starts a new server, with the next id, to join a
// reconfigurable ensemble (WithReconfig), and blocks until it serves or
// the start timeout passes. Its configuration lists the running members
// and itself, as ZooKeeper's reconfiguration guide asks; it syncs with the
// leader but takes part in the quorum only once a reconfiguration adds it
// (reconfig with its ConfigLine). On failure it leaves nothing running.
func (e *Ensemble) AddServer() (*Server, error) {
	if !e.opts.reconfig {
		return nil, errors.New("zktest: AddServer needs an ensemble launched WithReconfig")
	}
	return retryPorts(func() (*Server, error) { return e.addServer() })
}

func (e *Ensemble) addServer() (*Server, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	self := peer{id: len(e.servers) + 1, clientPort: ports[0], quorumPort: ports[1], electionPort: ports[2]}
	var peers []peer
	for _, s := range e.servers {
		if s.Running() {
			peers = append(peers, s.peer)
		}
	}
	e.mu.Unlock()
	peers = append(peers, self)
	s, err := newServer(e.inst, e.opts, self, peers)
	if err != nil {
		return nil, err
	}
	p, err := s.start()
	if err != nil {
		s.Close()
		return nil, err
	}
	if err := s.awaitServing(p, time.Now().Add(e.opts.startTimeout)); err != nil {
		s.Close()
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if self.id != len(e.servers)+1 {
		// Another AddServer took the id meanwhile.
		s.Close()
		return nil, fmt.Errorf("zktest: concurrent AddServer for id %d", self.id)
	}
	e.servers = append(e.servers, s)
	return s, nil
}

// ConnectString lists every member's address, comma-separated, running or
// not, as clients of the ensemble expect.
func (e *Ensemble) ConnectString() string {
	servers := e.Servers()
	addrs := make([]string, len(servers))
	for i, s := range servers {
		addrs[i] = s.Addr()
	}
	return strings.Join(addrs, ",")
}

// ErrNoLeader is returned by Leader when no running member reports itself
// as leader, for example during an election or without a quorum.
var ErrNoLeader = errors.New("zktest: no leader")

// Leader asks every running member for its mode (srvr) and returns the one
// that says "leader" (or "standalone" in an ensemble of one). It does not
// wait for an election: use AwaitLeader for that.
func (e *Ensemble) Leader() (*Server, error) {
	for _, s := range e.Servers() {
		if !s.Running() {
			continue
		}
		mode, err := s.Mode()
		if err != nil {
			continue
		}
		if mode == "leader" || mode == "standalone" {
			return s, nil
		}
	}
	return nil, ErrNoLeader
}

// AwaitLeader polls Leader until a member other than any in exclude leads
// (pass the old leader after killing it) or ctx ends, whose error it then
// returns.
func (e *Ensemble) AwaitLeader(ctx context.Context, exclude ...*Server) (*Server, error) {
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		if l, err := e.Leader(); err == nil && !containsServer(exclude, l) {
			return l, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("zktest: await leader: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

func containsServer(list []*Server, s *Server) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// WatchCount sums WatchCount over the running members; a watch lives on
// the member its client is connected to.
func (e *Ensemble) WatchCount() (int, error) {
	total := 0
	for _, s := range e.Servers() {
		if !s.Running() {
			continue
		}
		n, err := s.WatchCount()
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// Close kills every member, waits for the processes to exit and removes
// their directories (unless WithKeepFiles). It is safe to call more than
// once.
func (e *Ensemble) Close() error {
	var errs []error
	for _, s := range e.Servers() {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}
