package framework

import (
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/zktest"
)

// Close called from a state listener used to deadlock: Close waited for
// every listener goroutine, the caller's included, and every later Close
// waited on the first.
func TestCloseFromListener(t *testing.T) {
	srv := server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	c, err := Connect(testCtx(t), proxy.Addr(), WithNamespace(newNamespace(t)), WithSessionTimeout(3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	c.Listen(func(s connstate.State) {
		if s == connstate.Suspended {
			closed <- c.Close()
		}
	})
	proxy.Cut()
	if err := waitEvent(t, closed, testTimeout, "Close from a listener"); err != nil {
		t.Fatalf("Close from a listener: %v", err)
	}
	later := make(chan error, 1)
	go func() { later <- c.Close() }()
	if err := waitEvent(t, later, testTimeout, "a later Close"); err != nil {
		t.Fatalf("later Close: %v", err)
	}
	waitClosed(t, c.Done(), testTimeout, "client Done")
}

// OnClose hooks run inside Close, before it returns; a stopped hook never
// runs; a hook registered after Close runs at once.
func TestOnClose(t *testing.T) {
	c := connectNS(t, newNamespace(t))
	ran := make(chan string, 3)
	c.OnClose(func() { ran <- "kept" })
	stop := c.OnClose(func() { ran <- "stopped" })
	if !stop() {
		t.Fatal("stop of a registered hook reported it was not registered")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-ran:
		if got != "kept" {
			t.Fatalf("hook %q ran", got)
		}
	default:
		t.Fatal("the hook had not run when Close returned")
	}
	late := c.OnClose(func() { ran <- "late" })
	if got := <-ran; got != "late" {
		t.Fatalf("hook %q ran", got)
	}
	if late() {
		t.Fatal("stop of a hook that ran reported it registered")
	}
	select {
	case got := <-ran:
		t.Fatalf("hook %q ran", got)
	default:
	}
}

// Close of a client whose connection went silent (a black hole, not a
// reset) returns within go-zookeeper's one-second wait for the close
// reply and leaves no goroutine reading the silent socket (goleak checks
// when the package's tests end): the socket is closed too.
func TestCloseWhileSilent(t *testing.T) {
	srv := server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	c, err := Connect(testCtx(t), proxy.Addr(), WithNamespace(newNamespace(t)), WithSessionTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	proxy.BlackHole()
	start := time.Now()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("Close took %v", took)
	}
	proxy.Restore()
}
