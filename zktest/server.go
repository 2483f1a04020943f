package zktest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// stopGrace is how long Stop waits after SIGTERM before it sends SIGKILL.
const stopGrace = 10 * time.Second

// pollInterval is how often readiness waits ask a server again.
const pollInterval = 25 * time.Millisecond

// errAddrInUse marks a start that failed because a port was taken between
// freePorts and the JVM's bind; Launch retries those with new ports.
var errAddrInUse = errors.New("zktest: port taken by another process")

// Server is one ZooKeeper server process on loopback, standalone or a
// member of an Ensemble. Its methods are safe for concurrent use; Stop,
// Kill, Restart and Close wait for one another.
type Server struct {
	id   int
	port int
	peer peer // ports and id as the ensemble's configuration lists them
	dir  string
	inst installation
	opts options
	log  *os.File

	proc atomic.Pointer[process] // nil when stopped

	mu     sync.Mutex // serialises starting and stopping
	closed bool
}

// Launch starts a standalone ZooKeeper server on a free loopback port in a
// new directory and blocks until it serves (ruok answers imok and srvr
// shows its mode) or the start timeout passes. On failure it leaves
// nothing running and nothing on disk (unless WithKeepFiles) and the error
// carries the end of the server's log. The caller must Close the server.
func Launch(opts ...Option) (*Server, error) {
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	inst, err := findInstallation()
	if err != nil {
		return nil, err
	}
	return retryPorts(func() (*Server, error) {
		ports, err := freePorts(1)
		if err != nil {
			return nil, err
		}
		s, err := newServer(inst, o, peer{id: 1, clientPort: ports[0]}, nil)
		if err != nil {
			return nil, err
		}
		p, err := s.start()
		if err != nil {
			s.Close()
			return nil, err
		}
		if err := s.awaitServing(p, time.Now().Add(o.startTimeout)); err != nil {
			s.Close()
			return nil, err
		}
		return s, nil
	})
}

// retryPorts runs launch again with fresh ports when a port it picked was
// taken by someone else before the JVM could bind it.
func retryPorts[T any](launch func() (T, error)) (T, error) {
	const attempts = 3
	var (
		v   T
		err error
	)
	for range attempts {
		v, err = launch()
		if !errors.Is(err, errAddrInUse) {
			return v, err
		}
	}
	return v, err
}

// newServer creates the server's directory and files; it starts nothing.
func newServer(inst installation, o options, self peer, peers []peer) (*Server, error) {
	if o.baseDir == "" {
		sweepStale()
	}
	dir, err := os.MkdirTemp(o.baseDir, fmt.Sprintf("zktest-%d-", self.id))
	if err != nil {
		return nil, fmt.Errorf("zktest: create server dir: %w", err)
	}
	if err := writeConfig(dir, self, peers, o); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if !o.keepFiles {
		if err := writeOwner(dir); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("zktest: write %s: %w", ownerFile, err)
		}
	}
	log, err := os.OpenFile(filepath.Join(dir, logFileName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("zktest: open server log: %w", err)
	}
	return &Server{id: self.id, port: self.clientPort, peer: self, dir: dir, inst: inst, opts: o, log: log}, nil
}

// ID is the server's id in its ensemble (the myid file); a standalone
// server's is 1.
func (s *Server) ID() int { return s.id }

// Pid is the process id of the server's JVM, or 0 while it is not
// running: a benchmark reads its CPU time from it.
func (s *Server) Pid() int {
	if p := s.proc.Load(); p != nil && !p.exited() {
		return p.cmd.Process.Pid
	}
	return 0
}

// Addr is the server's client address, 127.0.0.1:port. It stays the same
// across Stop, Kill and Restart.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// ConfigLine is the server's line in its ensemble's configuration,
// "server.<id>=<host>:<quorum port>:<election port>", and in a
// reconfigurable ensemble (WithReconfig) also ":participant;<client
// address>": the form ZooKeeper's reconfig takes for a joining server.
func (s *Server) ConfigLine() string { return s.peer.line(s.opts) }

// ConnectString is the connect string for this server alone (its Addr).
func (s *Server) ConnectString() string { return s.Addr() }

// Dir is the server's directory: zoo.cfg, data/ and server.log.
func (s *Server) Dir() string { return s.dir }

// LogPath is the file that receives the server's output across restarts.
func (s *Server) LogPath() string { return filepath.Join(s.dir, logFileName) }

// Running reports whether the server's process is alive.
func (s *Server) Running() bool {
	p := s.proc.Load()
	return p != nil && !p.exited()
}

// start launches the JVM; it does not wait for it to serve.
func (s *Server) start() (*process, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.startLocked()
}

func (s *Server) startLocked() (*process, error) {
	if s.closed {
		return nil, fmt.Errorf("zktest: server %d: closed", s.id)
	}
	if p := s.proc.Load(); p != nil {
		// Stop and Kill clear proc; a process that died on its own is
		// reaped already and is replaced.
		if !p.exited() {
			return p, nil
		}
	}
	fmt.Fprintf(s.log, "---- zktest: starting server %d on %s at %s ----\n", s.id, s.Addr(), time.Now().Format(time.RFC3339Nano))
	p, err := startProcess(s.inst.java, jvmArgs(s.inst, s.opts, s.dir), s.dir, s.log, s.opts.logOutput)
	if err != nil {
		return nil, fmt.Errorf("zktest: server %d: %w", s.id, err)
	}
	s.proc.Store(p)
	return p, nil
}

// awaitServing polls ruok and srvr until the server serves, p exits, or
// deadline passes.
func (s *Server) awaitServing(p *process, deadline time.Time) error {
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		if !p.exited() && s.serving() {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("zktest: server %d on %s not serving after %v (%s):\n%s",
				s.id, s.Addr(), s.opts.startTimeout, s.lastMode(), s.logTail())
		}
		select {
		case <-p.done:
			tail := s.logTail()
			err := fmt.Errorf("zktest: server %d on %s exited during start (%w):\n%s", s.id, s.Addr(), p.err, tail)
			if strings.Contains(tail, "Address already in use") {
				err = fmt.Errorf("%w: %w", errAddrInUse, err)
			}
			return err
		case <-tick.C:
		}
	}
}

// serving reports whether the server answers ruok and has a mode, i.e. is
// standalone or has joined a quorum.
func (s *Server) serving() bool {
	// Short probes: whatever holds the port while the JVM starts (or fails
	// to) must not stall the wait.
	const probe = 500 * time.Millisecond
	ok, err := fourLetterWordWithin(s.Addr(), "ruok", probe)
	if err != nil || ok != "imok" {
		return false
	}
	srvr, err := fourLetterWordWithin(s.Addr(), "srvr", probe)
	return err == nil && parseMode(srvr) != ""
}

// lastMode describes the server's state for a timeout message.
func (s *Server) lastMode() string {
	srvr, err := fourLetterWord(s.Addr(), "srvr")
	if err != nil {
		return err.Error()
	}
	return "srvr: " + strings.TrimSpace(srvr)
}

// Stop shuts the server down gracefully (SIGTERM) and blocks until the
// process has exited; after 10s it kills it. Data and port are kept for
// Restart. Stopping a stopped server does nothing.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked(syscall.SIGTERM)
	return nil
}

// Kill ends the server with SIGKILL, as a crash would, and blocks until the
// process has exited. Data and port are kept for Restart. Killing a stopped
// server does nothing.
func (s *Server) Kill() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked(syscall.SIGKILL)
	return nil
}

func (s *Server) stopLocked(sig syscall.Signal) {
	p := s.proc.Load()
	if p == nil {
		return
	}
	p.stop(sig, stopGrace)
	s.proc.Store(nil)
}

// Restart stops the server if it is running, starts it again with the same
// data and port, and blocks until it serves or the start timeout passes. A
// member of an ensemble serves only once it has joined a quorum, so
// Restart waits for enough of the other members to be running.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked(syscall.SIGTERM)
	p, err := s.startLocked()
	if err != nil {
		return err
	}
	return s.awaitServing(p, time.Now().Add(s.opts.startTimeout))
}

// Close kills the server, waits for the process to exit and removes its
// directory (unless WithKeepFiles). It is safe to call more than once.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.stopLocked(syscall.SIGKILL)
	err := s.log.Close()
	if !s.opts.keepFiles {
		err = errors.Join(err, os.RemoveAll(s.dir))
	}
	if err != nil {
		return fmt.Errorf("zktest: close server %d: %w", s.id, err)
	}
	return nil
}

// FourLetterWord sends a four-letter command (ruok, srvr, stat, wchs, wchc,
// cons, mntr, ...) to the server and returns its answer. It blocks for at
// most a few seconds.
func (s *Server) FourLetterWord(cmd string) (string, error) {
	return fourLetterWord(s.Addr(), cmd)
}

// Mode is the server's role from srvr: "standalone", "leader", "follower"
// or "observer". It fails when the server does not answer or is not
// serving (for example while its ensemble has no quorum).
func (s *Server) Mode() (string, error) {
	srvr, err := s.FourLetterWord("srvr")
	if err != nil {
		return "", err
	}
	mode := parseMode(srvr)
	if mode == "" {
		return "", fmt.Errorf("zktest: server %d not serving: %s", s.id, strings.TrimSpace(srvr))
	}
	return mode, nil
}

// WatchCount is the number of watches the server holds for its clients,
// from wchs's "Total watches:N".
func (s *Server) WatchCount() (int, error) {
	wchs, err := s.FourLetterWord("wchs")
	if err != nil {
		return 0, err
	}
	return parseTotalWatches(wchs)
}

// Log returns the server's output so far, across restarts.
func (s *Server) Log() (string, error) {
	b, err := os.ReadFile(s.LogPath())
	if err != nil {
		return "", fmt.Errorf("zktest: read server log: %w", err)
	}
	return string(b), nil
}

// logTail returns the last lines of the server's log for error messages.
func (s *Server) logTail() string {
	const maxLines = 30
	text, err := s.Log()
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) > maxLines {
		lines = lines[len(lines)-maxLines:]
	}
	return strings.Join(lines, "\n")
}
