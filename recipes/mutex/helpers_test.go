package mutex_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/zktest"
)

// deadline bounds every wait in these tests.
const deadline = 30 * time.Second

var nsCounter atomic.Int64

// namespace returns a namespace unique to the test, so tests can share a
// server and run in parallel.
func namespace(t testing.TB) string {
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	return fmt.Sprintf("t%d_%s", nsCounter.Add(1), name)
}

// connect returns a client of addr in namespace ns, closed at cleanup.
func connect(t testing.TB, addr, ns string, opts ...framework.Option) *framework.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
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

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	t.Cleanup(cancel)
	return ctx
}

// children lists path's children through c; none if path is missing.
func children(t testing.TB, c *framework.Client, path string) []string {
	t.Helper()
	ch, _, err := c.Children(ctxT(t), path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		t.Fatalf("children %s: %v", path, err)
	}
	return ch
}

// eventually polls cond (a server-side condition) until it holds.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitState waits until c reports s.
func waitState(t testing.TB, c *framework.Client, s connstate.State) {
	t.Helper()
	timer := time.NewTimer(deadline)
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

func waitClosed(t testing.TB, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(deadline):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// server starts a ZooKeeper for one test.
func server(t testing.TB) *zktest.Server { return zktest.StartServer(t) }
