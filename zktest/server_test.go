package zktest_test

import (
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/zktest"
)

func TestServer(t *testing.T) {
	start := time.Now()
	srv := zktest.StartServer(t)
	t.Logf("StartServer took %v", time.Since(start))

	t.Run("answers ruok and srvr", func(t *testing.T) {
		ok, err := srv.FourLetterWord("ruok")
		if err != nil || ok != "imok" {
			t.Fatalf("ruok = %q, %v; want imok", ok, err)
		}
		mode, err := srv.Mode()
		if err != nil || mode != "standalone" {
			t.Fatalf("Mode() = %q, %v; want standalone", mode, err)
		}
		if srv.ConnectString() != srv.Addr() || !strings.HasPrefix(srv.Addr(), "127.0.0.1:") {
			t.Fatalf("ConnectString %q, Addr %q", srv.ConnectString(), srv.Addr())
		}
		if srv.ID() != 1 || !srv.Running() {
			t.Fatalf("ID %d, Running %v; want 1, true", srv.ID(), srv.Running())
		}
	})

	t.Run("counts watches", func(t *testing.T) {
		c, _ := connect(t, []string{srv.Addr()})
		if _, err := c.Create("/watched", nil, 0, openACL); err != nil {
			t.Fatal(err)
		}
		assertWatches(t, srv, 0)
		_, _, fired, err := c.GetW("/watched")
		if err != nil {
			t.Fatal(err)
		}
		assertWatches(t, srv, 1)
		if _, err := c.Set("/watched", []byte("x"), -1); err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-fired:
			if ev.Type != zk.EventNodeDataChanged {
				t.Fatalf("watch fired with %v", ev.Type)
			}
		case <-time.After(waitTimeout):
			t.Fatal("watch did not fire")
		}
		eventually(t, "watch count back to 0", func() (bool, error) {
			n, err := srv.WatchCount()
			return n == 0, err
		})
	})

	t.Run("proxy passes four-letter words through", func(t *testing.T) {
		p := zktest.NewProxy(t, srv.Addr())
		conn, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(waitTimeout))
		if _, err := io.WriteString(conn, "ruok"); err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(conn)
		if err != nil || string(b) != "imok" {
			t.Fatalf("ruok through proxy = %q, %v", b, err)
		}
	})

	t.Run("proxy cut disconnects and restore keeps the session", func(t *testing.T) {
		p := zktest.NewProxy(t, srv.Addr())
		c, ev := connect(t, []string{p.Addr()})
		session := c.SessionID()
		if _, err := c.Create("/through-proxy", []byte("v"), 0, openACL); err != nil {
			t.Fatal(err)
		}
		// Watch events (xid -1) pass through the proxy.
		_, _, fired, err := c.GetW("/through-proxy")
		if err != nil {
			t.Fatal(err)
		}
		direct, _ := connect(t, []string{srv.Addr()})
		if _, err := direct.Set("/through-proxy", []byte("v"), -1); err != nil {
			t.Fatal(err)
		}
		select {
		case <-fired:
		case <-time.After(waitTimeout):
			t.Fatal("watch event did not come through the proxy")
		}

		p.Cut()
		next := ev.await(t, 0, zk.StateDisconnected)
		assertRefused(t, p.Addr())

		p.Restore()
		ev.await(t, next, zk.StateHasSession)
		if got := c.SessionID(); got != session {
			t.Fatalf("session after Restore = %x, want %x", got, session)
		}
		if data, _, err := c.Get("/through-proxy"); err != nil || string(data) != "v" {
			t.Fatalf("Get after Restore = %q, %v", data, err)
		}
	})

	t.Run("lost create reply leaves the node on the server", func(t *testing.T) {
		p := zktest.NewProxy(t, srv.Addr())
		c, ev := connect(t, []string{p.Addr()})
		direct, _ := connect(t, []string{srv.Addr()})

		fired := p.LoseNextCreateReply()
		_, err := c.Create("/lost-reply", nil, 0, openACL)
		if err == nil {
			t.Fatal("create through the fault returned no error")
		}
		t.Logf("create error: %v", err)
		select {
		case <-fired:
		case <-time.After(waitTimeout):
			t.Fatal("fault did not fire")
		}
		if ok, _, err := direct.Exists("/lost-reply"); err != nil || !ok {
			t.Fatalf("node on server: exists %v, %v; want true", ok, err)
		}

		// The client reconnects to its session; a blind retry now meets
		// its own node, which is what protected mode guards against.
		ev.await(t, 0, zk.StateDisconnected)
		eventually(t, "retry after reconnect", func() (bool, error) {
			_, err := c.Create("/lost-reply", nil, 0, openACL)
			return errors.Is(err, zk.ErrNodeExists), err
		})
	})
}

func TestServerStopRestartKill(t *testing.T) {
	srv := zktest.StartServer(t)
	c, _ := connect(t, []string{srv.Addr()})
	if _, err := c.Create("/kept", []byte("data"), 0, openACL); err != nil {
		t.Fatal(err)
	}
	c.Close()

	pid := srv.Pid()
	if proc, err := os.FindProcess(pid); pid <= 0 || err != nil || proc.Signal(syscall.Signal(0)) != nil {
		t.Fatalf("Pid() = %d: not a live process", pid)
	}
	for _, stop := range []struct {
		name string
		fn   func() error
	}{
		{"Stop", srv.Stop},
		{"Kill", srv.Kill},
	} {
		if err := stop.fn(); err != nil {
			t.Fatalf("%s: %v", stop.name, err)
		}
		if srv.Running() {
			t.Fatalf("%s: still running", stop.name)
		}
		if got := srv.Pid(); got != 0 {
			t.Fatalf("%s: Pid() = %d, want 0", stop.name, got)
		}
		if _, err := srv.FourLetterWord("ruok"); err == nil {
			t.Fatalf("%s: server still answers", stop.name)
		}
		if err := stop.fn(); err != nil {
			t.Fatalf("%s twice: %v", stop.name, err)
		}

		start := time.Now()
		if err := srv.Restart(); err != nil {
			t.Fatalf("Restart after %s: %v", stop.name, err)
		}
		t.Logf("Restart after %s took %v", stop.name, time.Since(start))
		if got := srv.Pid(); got <= 0 || got == pid {
			t.Fatalf("after %s and Restart: Pid() = %d, want a new process (was %d)", stop.name, got, pid)
		}
		pid = srv.Pid()
		c, _ := connect(t, []string{srv.Addr()})
		if data, _, err := c.Get("/kept"); err != nil || string(data) != "data" {
			t.Fatalf("after %s and Restart: Get = %q, %v", stop.name, data, err)
		}
		c.Close()
	}
}

// assertWatches checks the server's watch total now.
func assertWatches(t *testing.T, srv *zktest.Server, want int) {
	t.Helper()
	n, err := srv.WatchCount()
	if err != nil || n != want {
		t.Fatalf("WatchCount() = %d, %v; want %d", n, err, want)
	}
}

// assertRefused checks that a cut proxy closes a new connection at once.
func assertRefused(t *testing.T, addr string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(waitTimeout))
	if n, err := conn.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("read from cut proxy = %d, %v; want EOF", n, err)
	}
}
