package zkconn

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/internal/zkwire"
	"github.com/gocurator/curator/zktest"
)

// The layer against a real server, without the framework: go-zookeeper
// dials through a Wire, as the client's connection does.

const testDeadline = 30 * time.Second

// rig is one go-zookeeper connection through a Wire and a Registry.
type rig struct {
	t      *testing.T
	srv    *zktest.Server
	wire   *Wire
	pw     *Registry
	conn   *zk.Conn
	states chan zk.State
}

// newRig connects to addr through a new Wire; retire marks the Wire
// replaced before it dials (as the client's old connection is).
func newRig(t *testing.T, srv *zktest.Server, addr string, pw *Registry, set *Counts, retire bool) *rig {
	t.Helper()
	r := &rig{t: t, srv: srv, pw: pw, states: make(chan zk.State, 64)}
	r.wire = NewWire(Config{Counts: set, Registry: pw})
	if retire {
		r.wire.Retire()
	}
	conn, events, err := zk.Connect([]string{addr}, 10*time.Second,
		zk.WithDialer(r.wire.Dialer(net.DialTimeout)), zk.WithLogInfo(false), zk.WithLogger(zkSilent{}))
	if err != nil {
		t.Fatal(err)
	}
	r.conn = conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range events {
			if ev.Type == zk.EventSession {
				r.states <- ev.State
			}
		}
	}()
	t.Cleanup(func() {
		conn.Close()
		r.wire.Abandon()
		<-done
	})
	r.waitState(zk.StateHasSession)
	return r
}

type zkSilent struct{}

func (zkSilent) Printf(string, ...any) {}

func (r *rig) waitState(want zk.State) {
	r.t.Helper()
	timer := time.NewTimer(testDeadline)
	defer timer.Stop()
	for {
		select {
		case s := <-r.states:
			if s == want {
				return
			}
		case <-timer.C:
			r.t.Fatalf("no %v within %v", want, testDeadline)
		}
	}
}

// watchedPaths returns the paths the server holds a watch on for the
// rig's session (wchc).
func (r *rig) watchedPaths() []string {
	r.t.Helper()
	out, err := r.srv.FourLetterWord("wchc")
	if err != nil {
		r.t.Fatal(err)
	}
	session := fmt.Sprintf("0x%x", r.conn.SessionID())
	var paths []string
	mine := false
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "0x"):
			mine = strings.TrimSpace(line) == session
		case mine && strings.TrimSpace(line) != "":
			paths = append(paths, strings.TrimSpace(line))
		}
	}
	slices.Sort(paths)
	return slices.Compact(paths)
}

// subscriber records what the registry hands it.
type subscriber struct {
	*Subscriber
	events  chan string // "type path"
	resyncs chan bool   // armed
}

func newSubscriber(recursive bool) *subscriber {
	s := &subscriber{events: make(chan string, 64), resyncs: make(chan bool, 8)}
	s.Subscriber = &Subscriber{Recursive: recursive,
		Event: func(t zk.EventType, path string, _ int64) bool {
			s.events <- t.String() + " " + path
			return false
		},
		Resync: func(_, armed bool) bool {
			s.resyncs <- armed
			return true
		},
	}
	return s
}

func waitFor[E any](t *testing.T, ch <-chan E, what string) E {
	t.Helper()
	timer := time.NewTimer(testDeadline)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("%s: nothing within %v", what, testDeadline)
	}
	panic("unreachable")
}

// subscribe adds s on path and waits for the server's answer.
func subscribe(t *testing.T, pw *Registry, path string, s *Subscriber) {
	t.Helper()
	reply, ok, err := pw.Subscribe(path, s)
	if err != nil || !ok {
		t.Fatalf("subscribe %s: ok %v, %v", path, ok, err)
	}
	if reply != nil {
		if code := waitFor(t, reply, "AddWatch reply "+path); code != zkwire.ErrOK {
			t.Fatalf("AddWatch %s: code %d", path, code)
		}
	}
}

// A reconnection of the same session arms exactly the registered watches
// again, before go-zookeeper sends anything, and tells every subscriber:
// a path given up before the cut is not armed again.
func TestReconnectRearmsRegisteredWatches(t *testing.T) {
	srv := zktest.StartServer(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	var set Counts
	var r *rig
	pw := NewRegistry(zap.NewNop(), &set, func() *Conn { return r.wire.Live() })
	r = newRig(t, srv, proxy.Addr(), pw, &set, false)
	for _, p := range []string{"/a", "/b", "/c"} {
		if _, err := r.conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	a, b, c := newSubscriber(true), newSubscriber(false), newSubscriber(false)
	subscribe(t, pw, "/a", a.Subscriber)
	subscribe(t, pw, "/b", b.Subscriber)
	subscribe(t, pw, "/c", c.Subscriber)
	pw.Unsubscribe("/c", c.Subscriber)
	// The removal's reply comes before a later request's.
	if _, _, err := r.conn.Exists("/"); err != nil {
		t.Fatal(err)
	}
	if got, want := r.watchedPaths(), []string{"/a", "/b"}; !slices.Equal(got, want) {
		t.Fatalf("before the cut the server watches %v, want %v", got, want)
	}

	session := r.conn.SessionID()
	proxy.Cut()
	r.waitState(zk.StateDisconnected)
	proxy.Restore()
	r.waitState(zk.StateHasSession)
	if r.conn.SessionID() != session {
		t.Fatalf("a new session %#x, want %#x again", r.conn.SessionID(), session)
	}
	for name, s := range map[string]*subscriber{"/a": a, "/b": b} {
		if armed := waitFor(t, s.resyncs, "resync of "+name); !armed {
			t.Fatalf("%s: resync says not armed", name)
		}
	}
	select {
	case <-c.resyncs:
		t.Fatal("a subscriber given up was told of the reconnection")
	default:
	}
	if got, want := r.watchedPaths(), []string{"/a", "/b"}; !slices.Equal(got, want) {
		t.Fatalf("after the reconnection the server watches %v, want %v", got, want)
	}
	if _, err := r.conn.Create("/a/x", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if got := waitFor(t, a.events, "event under /a"); got != zk.EventNodeCreated.String()+" /a/x" {
		t.Fatalf("/a's subscriber got %q", got)
	}
}

// A Wire the client has replaced (retired) arms nothing on the
// connections it still makes: the registry's watches belong to the new one.
func TestRetiredWireArmsNothing(t *testing.T) {
	srv := zktest.StartServer(t)
	var set Counts
	var live func() *Conn
	pw := NewRegistry(zap.NewNop(), &set, func() *Conn { return live() })
	first := newRig(t, srv, srv.Addr(), pw, &set, false)
	live = first.wire.Live
	if _, err := first.conn.Create("/a", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	s := newSubscriber(true)
	subscribe(t, pw, "/a", s.Subscriber)
	if got := first.watchedPaths(); !slices.Equal(got, []string{"/a"}) {
		t.Fatalf("the live wire's session watches %v, want [/a]", got)
	}

	RecordOps(true)
	defer RecordOps(false)
	old := newRig(t, srv, srv.Addr(), pw, &set, true)
	if _, _, err := old.conn.Exists("/"); err != nil {
		t.Fatal(err)
	}
	if got := old.watchedPaths(); len(got) != 0 {
		t.Fatalf("the retired wire's session watches %v, want none", got)
	}
	for _, op := range old.wire.WrittenOps() {
		if op == zkwire.OpAddWatch || op == zkwire.OpSetWatches2 {
			t.Fatalf("the retired wire wrote opcode %d (ops %v)", op, old.wire.WrittenOps())
		}
	}
	select {
	case armed := <-s.resyncs:
		t.Fatalf("the subscriber was told of the retired wire's connection (armed %v)", armed)
	default:
	}
}
