package zktest

import (
	"errors"
	"net"
	"testing"
	"time"
)

// Launch retries with new ports only if a taken port is recognised.
func TestTakenPortIsRecognised(t *testing.T) {
	inst, err := findInstallation()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	o := defaultOptions()
	o.baseDir = t.TempDir()
	s, err := newServer(inst, o, peer{id: 1, clientPort: ln.Addr().(*net.TCPAddr).Port}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p, err := s.start()
	if err != nil {
		t.Fatal(err)
	}
	err = s.awaitServing(p, time.Now().Add(o.startTimeout))
	if !errors.Is(err, errAddrInUse) {
		t.Fatalf("start on a taken port: %v; want errAddrInUse", err)
	}
}
