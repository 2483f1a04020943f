// Package testkit holds the helpers the recipe packages' tests share:
// clients of a real ZooKeeper in a namespace of the test's own, and waits
// with a deadline (on events where there are events, else by polling the
// server).
package testkit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/zktest"
)

// Deadline bounds every wait.
const Deadline = 30 * time.Second

var seq atomic.Int64

// Unique returns a name unique to the test, for namespaces and paths, so
// tests can share a server.
func Unique(t testing.TB) string {
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	return fmt.Sprintf("t%d_%s", seq.Add(1), name)
}

// Connect returns a client of addr in namespace ns ("" for none), with a
// 10s session and a patient retry policy, closed at cleanup.
func Connect(t testing.TB, addr, ns string, opts ...framework.Option) *framework.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Deadline)
	defer cancel()
	base := []framework.Option{
		framework.WithNamespace(ns),
		framework.WithSessionTimeout(10 * time.Second),
		framework.WithRetryPolicy(retry.BoundedExponentialBackoff(20*time.Millisecond, 500*time.Millisecond, 40)),
	}
	c, err := framework.Connect(ctx, addr, append(base, opts...)...)
	if err != nil {
		t.Fatalf("connect %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Ctx returns a context bounded by Deadline, cancelled at cleanup.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Deadline)
	t.Cleanup(cancel)
	return ctx
}

// Children lists path's children through c; none if path is missing.
func Children(t testing.TB, c *framework.Client, path string) []string {
	t.Helper()
	ch, _, err := c.Children(Ctx(t), path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		t.Fatalf("children %s: %v", path, err)
	}
	return ch
}

// Eventually polls cond, a server-side condition, until it holds.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(Deadline)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting until %s", what)
		}
		<-tick.C
	}
}

// WaitState waits until c reports s, on the client's state changes.
func WaitState(t testing.TB, c *framework.Client, s connstate.State) {
	t.Helper()
	timer := time.NewTimer(Deadline)
	defer timer.Stop()
	for {
		ch := c.StateChanged()
		if c.State() == s {
			return
		}
		select {
		case <-ch:
		case <-timer.C:
			t.Fatalf("state %v never reached (now %v)", s, c.State())
		}
	}
}

// WaitClosed waits for ch to close.
func WaitClosed(t testing.TB, ch <-chan struct{}, what string) {
	t.Helper()
	timer := time.NewTimer(Deadline)
	defer timer.Stop()
	select {
	case <-ch:
	case <-timer.C:
		t.Fatalf("timed out waiting for %s", what)
	}
}

// Main runs a package's tests with one real ZooKeeper server for all of
// them, its connect string in *addr, stopped before goleak looks for
// leftover goroutines: func TestMain(m *testing.M) { testkit.Main(m, &addr) }.
func Main(m *testing.M, addr *string) {
	goleak.VerifyTestMain(withServer{m: m, addr: addr})
}

type withServer struct {
	m    *testing.M
	addr *string
}

func (w withServer) Run() int {
	srv, err := zktest.Launch()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer srv.Close()
	*w.addr = srv.ConnectString()
	return w.m.Run()
}
