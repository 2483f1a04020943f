package framework

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/internal/zkwire"
)

// oldServer stands in front of a real server as ZooKeeper 3.5 would: srvr
// says 3.5.10 (or, with srvrRefused, that srvr is not whitelisted), and
// AddWatch or SetWatches2 is answered UNIMPLEMENTED before the connection
// is dropped, as 3.5's UnimplementedRequestProcessor does. Everything else
// goes to the real server. A test double for the capability decision only:
// the watching itself runs against the real server behind it.
type oldServer struct {
	ln          net.Listener
	target      string
	srvrRefused bool
	addWatch    atomic.Int32 // 106 received
	setWatches2 atomic.Int32 // 105 received
	wg          sync.WaitGroup
	mu          sync.Mutex
	conns       []net.Conn
}

func newOldServer(t *testing.T, target string, srvrRefused bool) *oldServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &oldServer{ln: ln, target: target, srvrRefused: srvrRefused}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(func() {
		ln.Close()
		s.cut()
		s.wg.Wait()
	})
	return s
}

func (s *oldServer) addr() string { return s.ln.Addr().String() }

// cut drops every connection.
func (s *oldServer) cut() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		c.Close()
	}
	s.conns = nil
}

func (s *oldServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serve(c)
		}()
	}
}

func (s *oldServer) serve(client net.Conn) {
	defer client.Close()
	br := bufio.NewReader(client)
	head, err := br.Peek(4)
	if err != nil {
		return
	}
	if string(head) == "srvr" {
		if s.srvrRefused {
			io.WriteString(client, "srvr is not executed because it is not in the whitelist.\n")
		} else {
			io.WriteString(client, "Zookeeper version: 3.5.10-c4a0cbc2c8d6d1a2c2f0c4ad0b4e2c5bd0f0a1b2, built on 05/29/2022 GMT\nMode: standalone\n")
		}
		return
	}
	server, err := net.Dial("tcp", s.target)
	if err != nil {
		return
	}
	defer server.Close()
	s.mu.Lock()
	s.conns = append(s.conns, client, server)
	s.mu.Unlock()
	var wmu sync.Mutex // frames to the client, whole
	done := make(chan struct{})
	go func() {
		defer close(done)
		sr := bufio.NewReader(server)
		for {
			f, err := readWholeFrame(sr)
			if err != nil {
				client.Close()
				return
			}
			wmu.Lock()
			_, err = client.Write(f)
			wmu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	first := true
	for {
		f, err := readWholeFrame(br)
		if err != nil {
			break
		}
		if !first && len(f) >= 12 {
			xid := int32(binary.BigEndian.Uint32(f[4:8]))
			switch int32(binary.BigEndian.Uint32(f[8:12])) {
			case zkwire.OpAddWatch, zkwire.OpSetWatches2:
				if int32(binary.BigEndian.Uint32(f[8:12])) == zkwire.OpAddWatch {
					s.addWatch.Add(1)
				} else {
					s.setWatches2.Add(1)
				}
				wmu.Lock()
				client.Write(zkwire.Reply(xid, 0, zkwire.ErrUnimplemented, nil))
				wmu.Unlock()
				client.Close()
				server.Close()
				<-done
				return
			}
		}
		first = false
		if _, err := server.Write(f); err != nil {
			break
		}
	}
	server.Close()
	<-done
}

func readWholeFrame(r *bufio.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := int(binary.BigEndian.Uint32(n[:]))
	if size < 0 || size > 16<<20 {
		return nil, errors.New("bad frame")
	}
	f := make([]byte, 4+size)
	copy(f, n[:])
	_, err := io.ReadFull(r, f[4:])
	return f, err
}

// A server whose srvr says 3.5: no AddWatch or SetWatches2 is ever sent
// to it, a node Watcher falls back to one-shot watches (and gets its
// events, and a Resync after a reconnection), a recursive one is refused.
func TestWatchFallbackOnOldServer(t *testing.T) {
	fake := newOldServer(t, server(t).Addr(), false)
	c := connect(t, fake.addr(), WithNamespace(newNamespace(t)))
	other := connectNS(t, c.Namespace())
	ctx := testCtx(t)
	if ok, err := c.PersistentWatches(ctx); err != nil || ok {
		t.Fatalf("PersistentWatches = %v, %v; want false", ok, err)
	}
	if v, err := c.ServerVersion(ctx); err != nil || v != "3.5.10" {
		t.Fatalf("ServerVersion = %q, %v", v, err)
	}
	w, err := c.Watch(ctx, "/n")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.Persistent() {
		t.Fatal("Persistent() on a 3.5 server")
	}
	if _, err := other.Create(ctx, "/n", nil); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, w, WatchCreated, "/n")
	if _, err := other.Set(ctx, "/n", []byte("x"), -1); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, w, WatchDataChanged, "/n")
	if _, err := other.Create(ctx, "/n/k", nil); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, w, WatchChildrenChanged, "/n")
	states := record(c)
	defer states.cancel()
	fake.cut()
	states.expect(t, testTimeout, connstate.Suspended, connstate.Reconnected)
	collect(t, w, func(ev WatchEvent) bool { return ev.Type == WatchResync })
	if err := other.Delete(ctx, "/n", DeletingChildren()); err != nil {
		t.Fatal(err)
	}
	collect(t, w, func(ev WatchEvent) bool { return ev.Type == WatchDeleted })
	if n, m := fake.addWatch.Load(), fake.setWatches2.Load(); n != 0 || m != 0 {
		t.Fatalf("sent %d AddWatch and %d SetWatches2 to a 3.5 server", n, m)
	}
	// Its exists watch on the missing node goes with it.
	awaitServerWatches(t, server(t).Addr(), c, c.full("/n"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	awaitServerWatches(t, server(t).Addr(), c)
}

// A server that does not answer srvr: the first AddWatch finds out (it is
// answered UNIMPLEMENTED and the connection drops, as 3.5 does), the
// Watcher falls back, and no later connection to it is sent another
// AddWatch or a SetWatches2.
func TestWatchFallbackOnUnimplemented(t *testing.T) {
	fake := newOldServer(t, server(t).Addr(), true)
	c := connect(t, fake.addr(), WithNamespace(newNamespace(t)))
	other := connectNS(t, c.Namespace())
	ctx := testCtx(t)
	w, err := c.Watch(ctx, "/n")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.Persistent() {
		t.Fatal("Persistent() after UNIMPLEMENTED")
	}
	if ok, err := c.PersistentWatches(ctx); err != nil || ok {
		t.Fatalf("PersistentWatches = %v, %v; want false", ok, err)
	}
	w2, err := c.Watch(ctx, "/n")
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	if _, err := other.Create(ctx, "/n", nil); err != nil {
		t.Fatal(err)
	}
	collect(t, w, func(ev WatchEvent) bool { return ev.Type == WatchCreated })
	collect(t, w2, func(ev WatchEvent) bool { return ev.Type == WatchCreated })
	states := record(c)
	defer states.cancel()
	fake.cut()
	states.expect(t, testTimeout, connstate.Suspended, connstate.Reconnected)
	if _, err := other.Set(ctx, "/n", []byte("x"), -1); err != nil {
		t.Fatal(err)
	}
	collect(t, w, func(ev WatchEvent) bool { return ev.Type == WatchDataChanged })
	if n, m := fake.addWatch.Load(), fake.setWatches2.Load(); n != 1 || m != 0 {
		t.Fatalf("sent %d AddWatch and %d SetWatches2, want 1 and 0", n, m)
	}
}

// A recursive Watcher on a 3.5 server: the one-shot tree fallback reports
// every creation, data change and deletion below the root (subtrees
// created and deleted whole included), never /rx for /r, a Resync after a
// reconnection, and leaves no watch on the server when it ends.
func TestWatchRecursiveFallbackOnOldServer(t *testing.T) {
	fake := newOldServer(t, server(t).Addr(), false)
	c := connect(t, fake.addr(), WithNamespace(newNamespace(t)))
	other := connectNS(t, c.Namespace())
	ctx := testCtx(t)
	if _, err := other.Create(ctx, "/r/old", nil, CreatingParents()); err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(ctx, "/r", Recursive())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.Persistent() {
		t.Fatal("Persistent() on a 3.5 server")
	}
	step := func(typ WatchEventType, path string, f func() error) {
		t.Helper()
		if err := f(); err != nil {
			t.Fatal(err)
		}
		collect(t, w, func(ev WatchEvent) bool {
			if ev.Type == WatchChildrenChanged || ev.Path != "/r" && !strings.HasPrefix(ev.Path, "/r/") {
				t.Fatalf("unexpected %+v", ev)
			}
			return ev.Type == typ && ev.Path == path
		})
	}
	step(WatchDataChanged, "/r/old", func() error { _, err := other.Set(ctx, "/r/old", []byte("x"), -1); return err })
	step(WatchCreated, "/r/a/b/c", func() error { _, err := other.Create(ctx, "/r/a/b/c", nil, CreatingParents()); return err })
	step(WatchDataChanged, "/r/a/b", func() error { _, err := other.Set(ctx, "/r/a/b", []byte("y"), -1); return err })
	if _, err := other.Create(ctx, "/rx", nil); err != nil {
		t.Fatal(err)
	}
	step(WatchDeleted, "/r/a", func() error { return other.Delete(ctx, "/r/a", DeletingChildren()) })
	step(WatchDataChanged, "/r", func() error { _, err := other.Set(ctx, "/r", []byte("z"), -1); return err })
	states := record(c)
	defer states.cancel()
	fake.cut()
	states.expect(t, testTimeout, connstate.Suspended, connstate.Reconnected)
	collect(t, w, func(ev WatchEvent) bool { return ev.Type == WatchResync })
	step(WatchCreated, "/r/new", func() error { _, err := other.Create(ctx, "/r/new", nil); return err })
	step(WatchDeleted, "/r", func() error { return other.Delete(ctx, "/r", DeletingChildren()) })
	step(WatchCreated, "/r", func() error { _, err := other.Create(ctx, "/r", nil); return err })
	if n, m := fake.addWatch.Load(), fake.setWatches2.Load(); n != 0 || m != 0 {
		t.Fatalf("sent %d AddWatch and %d SetWatches2 to a 3.5 server", n, m)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	awaitServerWatches(t, server(t).Addr(), c)
}
