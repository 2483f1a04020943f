package zktest

import (
	"testing"
)

// maxLogDump bounds how much of a server's log a failed test prints.
const maxLogDump = 64 << 10

// StartServer launches a standalone server for t and blocks until it
// serves. ZooKeeper missing (or any other failure) fails the test with
// t.Fatalf, naming the command that installs it; it never skips. The
// server is killed and its directory removed by t.Cleanup; if the test
// failed, its log is printed with t.Log first.
func StartServer(t testing.TB) *Server {
	t.Helper()
	s, err := Launch(WithBaseDir(t.TempDir()))
	if err != nil {
		t.Fatalf("zktest.StartServer: %v", err)
	}
	t.Cleanup(func() { closeForTest(t, s) })
	return s
}

// StartEnsemble launches an ensemble of n servers for t and blocks until
// every member serves and one leads. Failures fail the test as in
// StartServer; cleanup is the same, for every member.
func StartEnsemble(t testing.TB, n int) *Ensemble {
	t.Helper()
	return StartEnsembleWith(t, n)
}

// StartEnsembleWith is StartEnsemble with options, such as WithReconfig
// for an ensemble that can be reconfigured. Servers added later
// (AddServer) are cleaned up too.
func StartEnsembleWith(t testing.TB, n int, opts ...Option) *Ensemble {
	t.Helper()
	e, err := LaunchEnsemble(n, append([]Option{WithBaseDir(t.TempDir())}, opts...)...)
	if err != nil {
		t.Fatalf("zktest.StartEnsemble: %v", err)
	}
	t.Cleanup(func() {
		for _, s := range e.Servers() {
			closeForTest(t, s)
		}
	})
	return e
}

// NewProxy starts a Proxy to target for t. A failure to listen fails the
// test. t.Cleanup closes the proxy, its connections and its goroutines.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	p, err := ListenProxy(target)
	if err != nil {
		t.Fatalf("zktest.NewProxy: %v", err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("zktest: close proxy: %v", err)
		}
	})
	return p
}

// closeForTest kills s, prints its log if t failed, then removes it.
func closeForTest(t testing.TB, s *Server) {
	if err := s.Kill(); err != nil {
		t.Errorf("zktest: kill server %d: %v", s.ID(), err)
	}
	if t.Failed() {
		log, err := s.Log()
		if err != nil {
			t.Logf("zktest: server %d log: %v", s.ID(), err)
		} else {
			if len(log) > maxLogDump {
				log = "...\n" + log[len(log)-maxLogDump:]
			}
			t.Logf("zktest: server %d (%s) log:\n%s", s.ID(), s.Addr(), log)
		}
	}
	if err := s.Close(); err != nil {
		t.Errorf("zktest: %v", err)
	}
}
