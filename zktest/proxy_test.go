package zktest_test

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/zktest"
)

// quiet is how long the tests below listen for something that must not
// happen (a byte through a black hole, a close): absence can only be
// observed for a while.
const quiet = 300 * time.Millisecond

// connectWithTimeout is connect with a session timeout of st.
func connectWithTimeout(t *testing.T, addr string, st time.Duration) (*zk.Conn, *sessionEvents) {
	t.Helper()
	ev := newSessionEvents()
	c, _, err := zk.Connect([]string{addr}, st, zk.WithLogger(quietLogger{}), zk.WithEventCallback(ev.add))
	if err != nil {
		t.Fatalf("connect %s: %v", addr, err)
	}
	t.Cleanup(c.Close)
	ev.await(t, 0, zk.StateHasSession)
	return c, ev
}

// since returns the states of the session events from index from on.
func (r *sessionEvents) since(from int) []zk.State {
	r.mu.Lock()
	defer r.mu.Unlock()
	var states []zk.State
	for _, e := range r.events[from:] {
		states = append(states, e.State)
	}
	return states
}

func (r *sessionEvents) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

// A black hole is a silent partition: the client's request goes unanswered
// and its connection stays up (no disconnect until its own read timeout),
// the server expires the session after its timeout as if the client had
// died, and after Restore the client reconnects (to a new session).
func TestProxyBlackHoleExpiresSession(t *testing.T) {
	const st = 3 * time.Second // the client's read timeout is 2s, pings every 1s
	srv := zktest.StartServer(t)
	p := zktest.NewProxy(t, srv.Addr())
	c, ev := connectWithTimeout(t, p.Addr(), st)
	direct, _ := connectWithTimeout(t, srv.Addr(), 20*time.Second)
	old := c.SessionID()
	if _, err := c.Create("/black-holed", nil, zk.FlagEphemeral, openACL); err != nil {
		t.Fatal(err)
	}
	ok, _, gone, err := direct.ExistsW("/black-holed")
	if err != nil || !ok {
		t.Fatalf("ephemeral node from the direct client: %v, %v", ok, err)
	}

	from := ev.count()
	p.BlackHole()
	start := time.Now()
	answered := make(chan error, 1)
	go func() {
		_, _, err := c.Get("/black-holed")
		answered <- err
	}()
	// The client's read timeout is 2/3 of st: well before it, nothing at all.
	silence := time.NewTimer(st / 3)
	select {
	case err := <-answered:
		t.Fatalf("request answered in the black hole: %v", err)
	case <-silence.C:
	}
	if states := ev.since(from); len(states) != 0 {
		t.Fatalf("session events within %v of BlackHole: %v", st/3, states)
	}

	// The server expires the session: the direct client sees the ephemeral
	// node go, about a session timeout after the last frame it heard.
	select {
	case e := <-gone:
		if e.Type != zk.EventNodeDeleted {
			t.Fatalf("watch on the ephemeral node fired with %v", e.Type)
		}
	case <-time.After(waitTimeout):
		t.Fatal("the black-holed session's ephemeral node was not deleted")
	}
	expired := time.Since(start)
	t.Logf("ephemeral node deleted %v after BlackHole (session timeout %v)", expired.Round(time.Millisecond), st)
	if expired < st/2 || expired > 3*st {
		t.Fatalf("ephemeral node deleted %v after BlackHole, want about the session timeout %v", expired, st)
	}
	// The request failed on the client's own read timeout, not on a close
	// by the proxy.
	select {
	case err := <-answered:
		if err == nil {
			t.Fatal("request through the black hole succeeded")
		}
	case <-time.After(waitTimeout):
		t.Fatal("request through the black hole never failed")
	}

	p.Restore()
	next := ev.await(t, from, zk.StateExpired)
	ev.await(t, next, zk.StateHasSession)
	if c.SessionID() == old {
		t.Fatalf("session %x survived its expiry", old)
	}
	if _, err := c.Create("/black-holed", nil, zk.FlagEphemeral, openACL); err != nil {
		t.Fatalf("create after Restore: %v", err)
	}
}

// Bytes lost in a black hole break ZooKeeper's stream, so Restore closes
// the connection that lost them; a session that has not expired survives.
func TestProxyBlackHoleRestoreReconnectsToSession(t *testing.T) {
	srv := zktest.StartServer(t)
	p := zktest.NewProxy(t, srv.Addr())
	c, ev := connectWithTimeout(t, p.Addr(), 20*time.Second)
	session := c.SessionID()

	from := ev.count()
	p.BlackHole()
	answered := make(chan error, 1)
	go func() {
		_, err := c.Create("/lost-in-black-hole", nil, 0, openACL)
		answered <- err
	}()
	select {
	case err := <-answered:
		t.Fatalf("create answered in the black hole: %v", err)
	case <-time.After(quiet):
	}
	p.Restore()
	select {
	case err := <-answered:
		// The request never reached the server; the reply can only be a
		// connection loss.
		if err == nil {
			t.Fatal("create through the black hole succeeded")
		}
	case <-time.After(waitTimeout):
		t.Fatal("create still pending after Restore")
	}
	next := ev.await(t, from, zk.StateDisconnected)
	ev.await(t, next, zk.StateHasSession)
	if got := c.SessionID(); got != session {
		t.Fatalf("session after Restore = %x, want %x", got, session)
	}
	if ok, _, err := c.Exists("/lost-in-black-hole"); err != nil || ok {
		t.Fatalf("dropped create reached the server: exists %v, %v", ok, err)
	}
}

// frame builds a length-prefixed frame around payload.
func frame(payload string) []byte {
	b := make([]byte, 4+len(payload))
	binary.BigEndian.PutUint32(b, uint32(len(payload)))
	copy(b[4:], payload)
	return b
}

// readPayload reads one frame from r within d.
func readPayload(conn net.Conn, r *bufio.Reader, d time.Duration) (string, error) {
	conn.SetReadDeadline(time.Now().Add(d))
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return "", err
	}
	b := make([]byte, binary.BigEndian.Uint32(head[:]))
	if _, err := io.ReadFull(r, b); err != nil {
		return "", err
	}
	return string(b), nil
}

// endpoint is one end of a connection with its reader.
type endpoint struct {
	conn net.Conn
	r    *bufio.Reader
}

func (e endpoint) send(t *testing.T, payload string) {
	t.Helper()
	e.conn.SetWriteDeadline(time.Now().Add(waitTimeout))
	if _, err := e.conn.Write(frame(payload)); err != nil {
		t.Fatalf("send %q: %v", payload, err)
	}
}

func (e endpoint) expect(t *testing.T, payload string) {
	t.Helper()
	got, err := readPayload(e.conn, e.r, waitTimeout)
	if err != nil || got != payload {
		t.Fatalf("read %q, %v; want %q", got, err, payload)
	}
}

// expectSilence checks that nothing, not even a close, arrives for a while.
func (e endpoint) expectSilence(t *testing.T) {
	t.Helper()
	got, err := readPayload(e.conn, e.r, quiet)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("heard %q, %v in the black hole; want silence", got, err)
	}
}

// expectClosed checks that the connection is closed.
func (e endpoint) expectClosed(t *testing.T) {
	t.Helper()
	got, err := readPayload(e.conn, e.r, waitTimeout)
	if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read %q, %v; want the connection closed", got, err)
	}
}

// fakeTarget is a listener standing in for a ZooKeeper server, to watch
// exactly which bytes and closes get through the proxy.
type fakeTarget struct {
	ln net.Listener
}

func newFakeTarget(t *testing.T) *fakeTarget {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return &fakeTarget{ln: ln}
}

// dial connects a client through p and returns both ends once the proxy
// has dialled the target (the first frame has come through).
func (f *fakeTarget) dial(t *testing.T, p *zktest.Proxy) (client, server endpoint) {
	t.Helper()
	cc, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	client = endpoint{cc, bufio.NewReader(cc)}
	client.send(t, "hello")
	f.ln.(*net.TCPListener).SetDeadline(time.Now().Add(waitTimeout))
	sc, err := f.ln.Accept()
	if err != nil {
		t.Fatalf("target accept: %v", err)
	}
	t.Cleanup(func() { sc.Close() })
	server = endpoint{sc, bufio.NewReader(sc)}
	server.expect(t, "hello")
	return client, server
}

func TestProxyBlackHoleBytes(t *testing.T) {
	t.Run("restore keeps a connection that lost nothing", func(t *testing.T) {
		target := newFakeTarget(t)
		p := zktest.NewProxy(t, target.ln.Addr().String())
		client, server := target.dial(t, p)
		p.BlackHole()
		p.Restore()
		client.send(t, "after")
		server.expect(t, "after")
		server.send(t, "reply")
		client.expect(t, "reply")
	})

	t.Run("nothing gets through either way, closes included", func(t *testing.T) {
		target := newFakeTarget(t)
		p := zktest.NewProxy(t, target.ln.Addr().String())
		client, server := target.dial(t, p)
		p.BlackHole()
		client.send(t, "request")
		server.send(t, "reply")
		server.expectSilence(t)
		client.expectSilence(t)
		// The server gives up on the client (session expiry): the client
		// must not hear of it.
		server.conn.Close()
		client.expectSilence(t)
		client.send(t, "still talking")
		client.expectSilence(t)
		p.Restore()
		client.expectClosed(t)
	})

	t.Run("the client side closing is not passed on", func(t *testing.T) {
		target := newFakeTarget(t)
		p := zktest.NewProxy(t, target.ln.Addr().String())
		client, server := target.dial(t, p)
		p.BlackHole()
		client.conn.Close()
		server.expectSilence(t)
		p.Restore()
		server.expectClosed(t)
	})

	t.Run("restore closes a connection that lost bytes", func(t *testing.T) {
		target := newFakeTarget(t)
		p := zktest.NewProxy(t, target.ln.Addr().String())
		client, server := target.dial(t, p)
		p.BlackHole()
		server.send(t, "ping reply")
		client.expectSilence(t)
		p.Restore()
		client.expectClosed(t)
		server.expectClosed(t)
	})

	t.Run("new connections are accepted and hear nothing", func(t *testing.T) {
		target := newFakeTarget(t)
		p := zktest.NewProxy(t, target.ln.Addr().String())
		p.BlackHole()
		cc, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatalf("dial in the black hole: %v", err)
		}
		defer cc.Close()
		client := endpoint{cc, bufio.NewReader(cc)}
		client.send(t, "connect")
		client.expectSilence(t)
		target.ln.(*net.TCPListener).SetDeadline(time.Now().Add(quiet))
		if sc, err := target.ln.Accept(); err == nil {
			sc.Close()
			t.Fatal("the proxy dialled the target in the black hole")
		}
		p.Restore()
		client.expectClosed(t)
		// And the next connection goes through.
		client2, server2 := target.dial(t, p)
		server2.send(t, "welcome")
		client2.expect(t, "welcome")
	})

	t.Run("cut during a black hole closes and refuses", func(t *testing.T) {
		target := newFakeTarget(t)
		p := zktest.NewProxy(t, target.ln.Addr().String())
		client, _ := target.dial(t, p)
		p.BlackHole()
		p.Cut()
		client.expectClosed(t)
		p.Restore()
		client2, server2 := target.dial(t, p)
		client2.send(t, "again")
		server2.expect(t, "again")
	})
}

// BlackHole, Restore and Cut race with traffic on many connections without
// data races or leaked goroutines (goleak checks at the end of the package),
// and the proxy forwards normally afterwards.
func TestProxyBlackHoleConcurrent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var echoes sync.WaitGroup
	// Registered before the proxy's cleanup, so it runs after it: the echo
	// connections end when the proxy closes them.
	t.Cleanup(func() {
		ln.Close()
		echoes.Wait()
	})
	echoes.Add(1)
	go func() { // an echo target
		defer echoes.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			echoes.Add(1)
			go func() {
				defer echoes.Done()
				defer conn.Close()
				io.Copy(conn, conn)
			}()
		}
	}()
	p := zktest.NewProxy(t, ln.Addr().String())

	stop := make(chan struct{})
	var frames atomic.Int64 // frames sent, so the toggling overlaps traffic
	var clients sync.WaitGroup
	for i := 0; i < 4; i++ {
		clients.Add(1)
		go func() {
			defer clients.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				conn, err := net.Dial("tcp", p.Addr())
				if err != nil {
					continue
				}
				r := bufio.NewReader(conn)
				for j := 0; j < 20; j++ {
					conn.SetDeadline(time.Now().Add(20 * time.Millisecond))
					frames.Add(1)
					if _, err := conn.Write(frame("x")); err != nil {
						break
					}
					if _, err := readPayload(conn, r, 20*time.Millisecond); err != nil {
						break
					}
				}
				conn.Close()
			}
		}()
	}
	var toggles sync.WaitGroup
	for i := 0; i < 3; i++ {
		toggles.Add(1)
		go func() {
			defer toggles.Done()
			for j := 0; frames.Load() < 500; j++ {
				switch (i + j) % 4 {
				case 0, 1:
					p.BlackHole()
				case 2:
					p.Restore()
				case 3:
					if j%10 == 3 {
						p.Cut()
					}
				}
			}
		}()
	}
	toggles.Wait()
	p.Restore()
	close(stop)
	clients.Wait()

	conn, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	e := endpoint{conn, bufio.NewReader(conn)}
	e.send(t, "after the storm")
	e.expect(t, "after the storm")
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}
