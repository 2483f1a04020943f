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

// Guards fire inside Close, before it returns (closed true); a stopped
// guard never fires; a guard registered after Close, or for a session that
// is not the live one, fires at once.
func TestGuard(t *testing.T) {
	c := connectNS(t, newNamespace(t))
	ran := make(chan string, 4)
	sid := c.SessionID()
	c.Guard(sid, func(closed bool, _ connstate.State) {
		if closed {
			ran <- "kept"
		}
	})
	stop := c.Guard(sid, func(bool, connstate.State) { ran <- "stopped" })
	if !stop() {
		t.Fatal("stop of a registered guard reported it was not registered")
	}
	c.Guard(sid+1, func(closed bool, s connstate.State) {
		if !closed && s == connstate.Lost {
			ran <- "other session"
		}
	})
	if got := <-ran; got != "other session" {
		t.Fatalf("guard %q fired", got)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-ran:
		if got != "kept" {
			t.Fatalf("guard %q fired", got)
		}
	default:
		t.Fatal("the guard had not fired when Close returned")
	}
	late := c.Guard(sid, func(closed bool, _ connstate.State) {
		if closed {
			ran <- "late"
		}
	})
	if got := <-ran; got != "late" {
		t.Fatalf("guard %q fired", got)
	}
	if late() {
		t.Fatal("stop of a guard that fired reported it registered")
	}
	select {
	case got := <-ran:
		t.Fatalf("guard %q fired", got)
	default:
	}
	select {
	case <-c.Session().Done():
	default:
		t.Fatal("Session().Done() open after Close")
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
	// A bound, not a window: Close takes go-zookeeper's one second;
	// waiting on its read of the silent socket would take the receive
	// timeout, two thirds of the session timeout.
	if took := time.Since(start); took >= c.SessionTimeout()*2/3 {
		t.Fatalf("Close took %v", took)
	}
	proxy.Restore()
}
