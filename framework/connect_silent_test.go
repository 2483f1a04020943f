package framework

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"
)

// Connect to a server that accepts TCP but never answers used to return
// ~1.3 s after a 300 ms deadline and leave go-zookeeper's goroutine and
// socket alive for minutes (it reads the connect response with a deadline
// of ten receive timeouts). The deadline is the call's, and nothing is left:
// the socket is closed at once (the server side reads EOF), and goleak
// checks the goroutines when the package's tests end.
func TestConnectToSilentServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()

	const wait = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	start := time.Now()
	c, err := Connect(ctx, ln.Addr().String())
	took := time.Since(start)
	if err == nil {
		c.Close()
		t.Fatal("Connect to a silent server succeeded")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Connect = %v, want DeadlineExceeded", err)
	}
	t.Logf("Connect returned %v after its %v deadline", took-wait, wait)
	// A bound, not a window: what the regression cost (go-zookeeper's
	// one-second wait for the reply to its close request, and more), far
	// above a loaded machine's scheduling delays.
	if late := took - wait; late >= time.Second {
		t.Fatalf("Connect returned %v after its %v deadline", late, wait)
	}
	// Every socket the client opened is closed: the server reads EOF.
	ln.Close()
	for conn := range accepted {
		conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		buf := make([]byte, 512)
		for {
			_, err := conn.Read(buf)
			if err == nil {
				continue // the connect request
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatal("the client's socket is still open after Connect returned")
			}
			break
		}
		conn.Close()
	}
}
