package framework

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/zktest"
)

// The package shares one standalone server, started on first use and
// stopped after the last test; every test works in a namespace of its own.
var (
	sharedOnce sync.Once
	sharedSrv  *zktest.Server
	sharedErr  error
)

type packageMain struct{ m *testing.M }

func (p packageMain) Run() int {
	// Started before the tests, so that its connect string is in
	// $GOCURATOR_ZK, where the examples read it as a program would.
	sharedOnce.Do(func() { sharedSrv, sharedErr = zktest.Launch() })
	if sharedErr != nil {
		fmt.Fprintln(os.Stderr, "framework tests: starting the shared server:", sharedErr)
		return 1
	}
	if err := os.Setenv("GOCURATOR_ZK", sharedSrv.ConnectString()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := p.m.Run()
	if sharedSrv != nil {
		if err := sharedSrv.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "framework tests: closing the shared server:", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(packageMain{m}) }

// server returns the package's shared ZooKeeper server.
func server(t testing.TB) *zktest.Server {
	t.Helper()
	sharedOnce.Do(func() { sharedSrv, sharedErr = zktest.Launch() })
	if sharedErr != nil {
		t.Fatalf("starting the shared ZooKeeper server: %v", sharedErr)
	}
	return sharedSrv
}

var nsCounter atomic.Int64

// newNamespace returns a namespace no other test uses.
func newNamespace(t testing.TB) string {
	name := strings.NewReplacer("/", "_", " ", "_", "#", "_").Replace(t.Name())
	return fmt.Sprintf("%s-%d", name, nsCounter.Add(1))
}

// testTimeout bounds every single operation and wait of the tests.
const testTimeout = 30 * time.Second

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// connect connects to connectString and closes the client at the end of
// the test.
func connect(t testing.TB, connectString string, opts ...Option) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	c, err := Connect(ctx, connectString, opts...)
	if err != nil {
		t.Fatalf("Connect(%q): %v", connectString, err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

// connectNS connects to the shared server in namespace ns.
func connectNS(t testing.TB, ns string, opts ...Option) *Client {
	t.Helper()
	return connect(t, server(t).ConnectString(), append([]Option{WithNamespace(ns)}, opts...)...)
}

// recorder collects the states a client reports, in order.
type recorder struct {
	ch     chan connstate.State
	cancel func()
}

func record(c *Client) *recorder {
	r := &recorder{ch: make(chan connstate.State, 64)}
	r.cancel = c.Listen(func(s connstate.State) { r.ch <- s })
	return r
}

// expect fails unless the next states reported are want, in this order,
// each within d.
func (r *recorder) expect(t testing.TB, d time.Duration, want ...connstate.State) {
	t.Helper()
	for i, w := range want {
		timer := time.NewTimer(d)
		select {
		case s := <-r.ch:
			timer.Stop()
			if s != w {
				t.Fatalf("state %d: got %v, want %v (want sequence %v)", i, s, w, want)
			}
		case <-timer.C:
			t.Fatalf("state %d: no state within %v, want %v (want sequence %v)", i, d, w, want)
		}
	}
}

// eventually polls cond until it reports true, failing the test after d.
func eventually(t testing.TB, d time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		ok, err := cond()
		if ok {
			return
		}
		lastErr = err
		select {
		case <-deadline.C:
			t.Fatalf("%s: not within %v (last error: %v)", what, d, lastErr)
		case <-tick.C:
		}
	}
}

// waitEvent waits for a watch to fire.
func waitEvent[E any](t testing.TB, ch <-chan E, d time.Duration, what string) E {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatalf("%s: channel closed", what)
		}
		return ev
	case <-timer.C:
		t.Fatalf("%s: nothing within %v", what, d)
	}
	panic("unreachable")
}

// waitClosed waits for ch to be closed.
func waitClosed(t testing.TB, ch <-chan struct{}, d time.Duration, what string) {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ch:
	case <-timer.C:
		t.Fatalf("%s: not within %v", what, d)
	}
}

var seqSuffix = regexp.MustCompile(`^\d{10}$`)

// hasSeq reports whether name is base followed by a 10-digit sequence.
func hasSeq(name, base string) bool {
	return strings.HasPrefix(name, base) && seqSuffix.MatchString(name[len(base):])
}
