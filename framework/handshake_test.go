package framework

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/zktest"
)

// silentServer accepts connections and never answers: a server that is
// still starting (its port open, its request processing not yet) or hung.
// It reads and discards what clients send and closes every connection when
// the test ends.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = io.Copy(io.Discard, conn)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// A reconnect whose connection is accepted by a server that never answers
// the connect request gives up on it within a third of the session timeout
// and dials again, keeping the session. go-zookeeper on its own waits ten
// times its receive timeout for the answer (40 s for this 6 s session), so
// the client declared its session lost (at 90% of the timeout) while a
// working server was one dial away: the cause of a CI failure in which a
// restarted server served again after 2 s and the client reported Lost 16 s
// later.
func TestReconnectGivesUpOnSilentServer(t *testing.T) {
	proxy := zktest.NewProxy(t, server(t).Addr())
	silent := silentServer(t)
	var dials, hang atomic.Int32
	dialer := func(network, _ string, timeout time.Duration) (net.Conn, error) {
		dials.Add(1)
		if hang.CompareAndSwap(1, 0) {
			return net.DialTimeout(network, silent, timeout)
		}
		return net.DialTimeout(network, proxy.Addr(), timeout)
	}
	c := connect(t, proxy.Addr(), WithNamespace(newNamespace(t)), WithDialer(dialer),
		WithSessionTimeout(6*time.Second))
	sid := c.SessionID()
	states := record(c)
	defer states.cancel()

	hang.Store(1) // the next dial reaches the silent server
	proxy.Cut()
	states.expect(t, testTimeout, connstate.Suspended)
	proxy.Restore()
	states.expect(t, testTimeout, connstate.Reconnected)
	if got := c.SessionID(); got != sid {
		t.Fatalf("session %#x after the reconnect, want %#x", got, sid)
	}
	if hang.Load() != 0 {
		t.Fatal("the client never dialed the silent server")
	}
	t.Logf("%d dials", dials.Load())
}
