package shared_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/retry"
)

// deadline bounds every wait in these tests.
const deadline = 30 * time.Second

var nsCounter atomic.Int64

// unique returns a name unique to the test, for namespaces and paths.
func unique(t testing.TB) string {
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	return fmt.Sprintf("t%d_%s", nsCounter.Add(1), name)
}

// connect returns a client of addr, closed at cleanup; ns "" for none.
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

// ctxT returns a context bounded by deadline, cancelled at cleanup.
func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	t.Cleanup(cancel)
	return ctx
}

// waitClosed waits for ch to close, failing the test after deadline.
func waitClosed(t testing.TB, ch <-chan struct{}, what string) {
	t.Helper()
	timer := time.NewTimer(deadline)
	defer timer.Stop()
	select {
	case <-ch:
	case <-timer.C:
		t.Fatalf("timed out waiting for %s", what)
	}
}
