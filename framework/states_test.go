package framework

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/zktest"
)

// Cut and Restore within the session timeout: Suspended then Reconnected on
// the same session. Cut for longer than the session timeout: Lost while
// still cut (pitfall 5: nobody can tell the client its session expired, so
// it must decide on its own), then Reconnected on a new session.
func TestConnectionStates(t *testing.T) {
	srv := server(t)
	ns := newNamespace(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	// 3s: long enough for a redial (paced in tens of milliseconds, see
	// pacedHosts) to stay well inside the session, short enough for expiry
	// to come quickly.
	const sessionTimeout = 3 * time.Second
	c := connect(t, proxy.Addr(), WithNamespace(ns), WithSessionTimeout(sessionTimeout))
	direct := connectNS(t, ns)
	ctx := testCtx(t)
	if got := c.SessionTimeout(); got != sessionTimeout {
		t.Fatalf("negotiated session timeout %v, want %v", got, sessionTimeout)
	}
	if c.State() != connstate.Connected {
		t.Fatalf("state after Connect = %v, want Connected", c.State())
	}
	states := record(c)
	defer states.cancel()

	first := c.SessionID()
	if first == 0 {
		t.Fatal("no session id after Connect")
	}
	eph, err := c.Create(ctx, "/eph", nil, WithMode(Ephemeral))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, "/data", nil); err != nil {
		t.Fatal(err)
	}
	_, _, survivor, err := c.GetW(ctx, "/data")
	if err != nil {
		t.Fatal(err)
	}

	// A short partition.
	proxy.Cut()
	states.expect(t, testTimeout, connstate.Suspended)
	// A call made while cut completes once the partition ends.
	pending := make(chan error, 1)
	go func() {
		_, err := c.Set(ctx, "/data", []byte("while cut"), -1)
		pending <- err
	}()
	if c.State() != connstate.Suspended {
		t.Fatalf("State() = %v while cut, want Suspended", c.State())
	}
	if c.SessionID() != first {
		t.Fatalf("SessionID() = %#x while suspended, want %#x", c.SessionID(), first)
	}
	proxy.Restore()
	states.expect(t, testTimeout, connstate.Reconnected)
	if c.SessionID() != first {
		t.Fatalf("session after a short cut = %#x, want the same session %#x", c.SessionID(), first)
	}
	if st, err := direct.Exists(ctx, eph); err != nil || st == nil {
		t.Fatalf("ephemeral node gone after a short cut: %v, %v", st, err)
	}
	if err := waitEvent(t, pending, testTimeout, "Set issued while cut"); err != nil {
		t.Fatalf("Set issued while cut: %v", err)
	}
	// The watch set before the cut survived it (same session) and fires.
	if ev := waitEvent(t, survivor, testTimeout, "watch across a short cut"); ev.Type != zk.EventNodeDataChanged || ev.Path != "/data" {
		t.Fatalf("watch across a short cut: %+v, want NodeDataChanged on /data", ev)
	}
	_, _, lost, err := c.GetW(ctx, "/data")
	if err != nil {
		t.Fatal(err)
	}

	// A partition longer than the session: Lost arrives while still cut,
	// on the wall clock (TestClientSideExpiryOnClock pins when).
	proxy.Cut()
	states.expect(t, testTimeout, connstate.Suspended, connstate.Lost)
	if c.State() != connstate.Lost {
		t.Fatalf("State() = %v after Lost", c.State())
	}
	if c.SessionID() != 0 {
		t.Fatalf("SessionID() = %#x after Lost, want 0", c.SessionID())
	}
	// The session's watches end with it.
	if ev := waitEvent(t, lost, testTimeout, "watch of the lost session"); ev.Type != zk.EventNotWatching || ev.Path != "/data" {
		t.Fatalf("watch of the lost session: %+v, want EventNotWatching on /data", ev)
	}
	proxy.Restore()
	states.expect(t, testTimeout, connstate.Reconnected)
	second := c.SessionID()
	if second == 0 || second == first {
		t.Fatalf("session after Lost = %#x, want a new one (old %#x)", second, first)
	}
	if err := c.BlockUntilConnected(ctx); err != nil {
		t.Fatal(err)
	}
	// The old session's ephemeral node goes with it (the server expires the
	// session on its own clock, so poll).
	eventually(t, testTimeout, "old session's ephemeral node deleted", func() (bool, error) {
		st, err := direct.Exists(ctx, eph)
		return err == nil && st == nil, err
	})
	// The new session works.
	p, err := c.Create(ctx, "/eph", nil, WithMode(Ephemeral))
	if err != nil {
		t.Fatal(err)
	}
	st, err := direct.Exists(ctx, p)
	if err != nil || st == nil || st.EphemeralOwner != second {
		t.Fatalf("new ephemeral node: stat %+v, err %v; want owner %#x", st, err, second)
	}
}

// A listener that blocks delays neither the other listeners nor the client:
// states flow to the others, the connection is repaired and operations
// complete; the blocked listener then gets every state, in order.
func TestBlockedListener(t *testing.T) {
	srv := server(t)
	ns := newNamespace(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	c := connect(t, proxy.Addr(), WithNamespace(ns), WithSessionTimeout(5*time.Second))
	ctx := testCtx(t)

	release := make(chan struct{})
	slow := make(chan connstate.State, 16)
	cancelSlow := c.Listen(func(s connstate.State) {
		<-release
		slow <- s
	})
	defer cancelSlow()
	// Close waits for listeners to return: never leave this one blocked.
	var once bool
	unblock := func() {
		if !once {
			once = true
			close(release)
		}
	}
	defer unblock()
	states := record(c)
	defer states.cancel()

	proxy.Cut()
	states.expect(t, testTimeout, connstate.Suspended)
	proxy.Restore()
	states.expect(t, testTimeout, connstate.Reconnected)
	if _, err := c.Create(ctx, "/while-blocked", []byte("x")); err != nil {
		t.Fatalf("create while a listener blocks: %v", err)
	}
	if _, _, err := c.Get(ctx, "/while-blocked"); err != nil {
		t.Fatalf("get while a listener blocks: %v", err)
	}
	if len(slow) != 0 {
		t.Fatal("the blocked listener returned before it was released")
	}

	unblock()
	for _, want := range []connstate.State{connstate.Suspended, connstate.Reconnected} {
		if got := waitEvent(t, slow, testTimeout, "state for the released listener"); got != want {
			t.Fatalf("released listener got %v, want %v", got, want)
		}
	}
}

// Listen's cancel stops delivery; listeners see states in order even when
// many are published quickly (pitfall 14: never drop a state).
func TestListenCancel(t *testing.T) {
	srv := server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	c := connect(t, proxy.Addr(), WithSessionTimeout(5*time.Second))
	kept := record(c)
	defer kept.cancel()
	dropped := record(c)
	dropped.cancel()

	proxy.Cut()
	kept.expect(t, testTimeout, connstate.Suspended)
	proxy.Restore()
	kept.expect(t, testTimeout, connstate.Reconnected)
	if len(dropped.ch) != 0 {
		t.Fatalf("a cancelled listener got %d states", len(dropped.ch))
	}
}

// BlockUntilConnected returns at once when connected, waits through a
// partition, honours ctx, and reports ErrClosed after Close.
func TestBlockUntilConnected(t *testing.T) {
	srv := server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	c := connect(t, proxy.Addr(), WithSessionTimeout(10*time.Second))
	ctx := testCtx(t)
	if err := c.BlockUntilConnected(ctx); err != nil {
		t.Fatalf("connected client: %v", err)
	}
	states := record(c)
	defer states.cancel()

	changed := c.StateChanged()
	proxy.Cut()
	waitClosed(t, changed, testTimeout, "StateChanged at the cut")
	if s := c.State(); s != connstate.Suspended {
		t.Fatalf("State() after StateChanged fired = %v, want Suspended", s)
	}
	states.expect(t, testTimeout, connstate.Suspended)
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := c.BlockUntilConnected(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("while cut, with a 200ms deadline: %v, want context.DeadlineExceeded", err)
	}

	done := make(chan error, 1)
	go func() { done <- c.BlockUntilConnected(ctx) }()
	proxy.Restore()
	if err := waitEvent(t, done, testTimeout, "BlockUntilConnected after Restore"); err != nil {
		t.Fatalf("after Restore: %v", err)
	}
	states.expect(t, testTimeout, connstate.Reconnected)

	// Waiting while the client closes.
	proxy.Cut()
	states.expect(t, testTimeout, connstate.Suspended)
	go func() { done <- c.BlockUntilConnected(ctx) }()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := waitEvent(t, done, testTimeout, "BlockUntilConnected across Close"); !errors.Is(err, ErrClosed) {
		t.Fatalf("waiting across Close: %v, want ErrClosed", err)
	}
	if err := c.BlockUntilConnected(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v, want ErrClosed", err)
	}
}

// askedPolicy allows every retry after a long sleep and reports the first
// time it is asked, that is, when a call is about to sleep before a retry.
type askedPolicy struct {
	asked chan struct{}
	once  sync.Once
	sleep time.Duration
}

func (p *askedPolicy) AllowRetry(int, time.Duration) (time.Duration, bool) {
	p.once.Do(func() { close(p.asked) })
	return p.sleep, true
}

// Calls waiting when Close runs return ErrClosed promptly: those waiting
// for a connection that will not come back, and those sleeping before a
// retry. Both waits last an hour unless Close ends them, so the test's
// deadline on the Get's return tells the two apart without timing it.
func TestCloseInterruptsWaitingCalls(t *testing.T) {
	tests := []struct {
		name string
		// sleeping: Close only once the Get sleeps before a retry;
		// otherwise at once, while it waits for the connection.
		sleeping bool
		// connTimeout bounds each attempt's wait for the connection.
		connTimeout time.Duration
	}{
		{"sleeping before a retry", true, 3 * time.Second},
		{"issued just before Close", false, time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := server(t)
			proxy := zktest.NewProxy(t, srv.Addr())
			policy := &askedPolicy{asked: make(chan struct{}), sleep: time.Hour}
			c := connect(t, proxy.Addr(), WithSessionTimeout(10*time.Second), WithRetryPolicy(policy),
				WithConnectionTimeout(tt.connTimeout))
			ctx := testCtx(t)
			states := record(c)
			defer states.cancel()

			proxy.Cut()
			states.expect(t, testTimeout, connstate.Suspended)
			done := make(chan error, 1)
			go func() {
				_, _, err := c.Get(ctx, "/anything")
				done <- err
			}()
			if tt.sleeping {
				// The first attempt fails once its wait for the
				// connection ends (connTimeout); the retry then sleeps.
				waitClosed(t, policy.asked, testTimeout, "a retry of the Get")
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			err := waitEvent(t, done, testTimeout, "Get across Close")
			if !errors.Is(err, ErrClosed) {
				t.Fatalf("Get across Close: %v, want ErrClosed", err)
			}
		})
	}
}

// WithLogger receives the client's state changes at Info, and
// go-zookeeper's own logging at Debug under the "zk" name.
func TestLogger(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	c := connect(t, server(t).ConnectString(), WithLogger(zap.New(core)))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	sawState := false
	for _, e := range logs.All() {
		if e.Message == "connection state" && e.Level == zap.InfoLevel && e.ContextMap()["state"] == connstate.Connected.String() {
			sawState = true
		}
	}
	if !sawState {
		t.Fatalf("no Connected state logged; entries: %+v", logs.All())
	}

	// go-zookeeper complains when it cannot reach a server.
	core, logs = observer.New(zap.DebugLevel)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := Connect(ctx, "127.0.0.1:1", WithLogger(zap.New(core))); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Connect to nothing = %v", err)
	}
	sawZK := false
	for _, e := range logs.All() {
		msg := e.Message
		if strings.HasSuffix(e.LoggerName, ".zk") && e.Level == zap.DebugLevel && strings.Contains(msg, "127.0.0.1:1") {
			sawZK = true
		}
	}
	if !sawZK {
		t.Fatalf("go-zookeeper's log did not reach the logger; entries: %+v", logs.All())
	}
}

// A server restart inside the session timeout is a disconnect like any
// other: Suspended, then Reconnected on the same session, ephemeral nodes
// kept (the server restores sessions from its log).
func TestServerRestart(t *testing.T) {
	srv := zktest.StartServer(t)
	ns := newNamespace(t)
	// The session outlives a stop and a JVM start on a loaded machine.
	// A reconnect that reaches the server while it is still starting
	// gives up on the silent connection after a third of the timeout (see
	// TestReconnectGivesUpOnSilentServer) and dials again in time.
	c := connect(t, srv.ConnectString(), WithNamespace(ns), WithSessionTimeout(30*time.Second),
		WithRetryPolicy(retry.UntilElapsed(testTimeout, 100*time.Millisecond)))
	ctx := testCtx(t)
	eph, err := c.Create(ctx, "/eph", []byte("x"), WithMode(Ephemeral))
	if err != nil {
		t.Fatal(err)
	}
	states := record(c)
	defer states.cancel()
	sid := c.SessionID()

	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	states.expect(t, testTimeout, connstate.Suspended)
	// An operation issued while the server is down completes after it is
	// back.
	pending := make(chan error, 1)
	go func() {
		_, err := c.Set(ctx, eph, []byte("y"), -1)
		pending <- err
	}()
	stopped := time.Now()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	t.Logf("server serving again %v after the stop", time.Since(stopped).Round(time.Millisecond))
	states.expect(t, testTimeout, connstate.Reconnected)
	if c.SessionID() != sid {
		t.Fatalf("session %#x after a restart, want %#x", c.SessionID(), sid)
	}
	if err := waitEvent(t, pending, testTimeout, "Set issued while the server was down"); err != nil {
		t.Fatalf("Set issued while the server was down: %v", err)
	}
	data, st, err := c.Get(ctx, eph)
	if err != nil || string(data) != "y" || st.EphemeralOwner != sid {
		t.Fatalf("ephemeral after a restart: %q, %+v, %v", data, st, err)
	}
}
