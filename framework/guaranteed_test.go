package framework

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/zktest"
)

// Pitfall 2 and 10: a delete that fails for a partition returns the error,
// so the caller knows the node still exists, and a guaranteed delete keeps
// trying until the node is gone.
func TestGuaranteedDeleteWhileCut(t *testing.T) {
	tests := []struct {
		name string
		// deleteCtx makes the context of the delete issued while cut.
		deleteCtx func(ctx context.Context) (context.Context, context.CancelFunc)
		policy    retry.Policy
	}{
		{"retries exhausted", func(ctx context.Context) (context.Context, context.CancelFunc) {
			return context.WithCancel(ctx)
		}, retry.NTimes(1, 50*time.Millisecond)},
		{"deadline", func(ctx context.Context) (context.Context, context.CancelFunc) {
			return context.WithTimeout(ctx, 300*time.Millisecond)
		}, retry.Forever(50 * time.Millisecond)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := server(t)
			ns := newNamespace(t)
			proxy := zktest.NewProxy(t, srv.Addr())
			// Attempts wait for the connection up to the connection
			// timeout, which also bounds Connect: short enough for the
			// retries to run out quickly (the cut lasts until Restore,
			// so it outlasts the call whatever the timeout), long
			// enough for Connect on a loaded machine (300ms was not).
			c := connect(t, proxy.Addr(), WithNamespace(ns), WithSessionTimeout(10*time.Second),
				WithRetryPolicy(tt.policy), WithConnectionTimeout(3*time.Second))
			watcher := connectNS(t, ns)
			ctx := testCtx(t)
			if _, err := c.Create(ctx, "/doomed/child", []byte("x"), CreatingParents()); err != nil {
				t.Fatal(err)
			}
			_, _, deleted, err := watcher.GetW(ctx, "/doomed")
			if err != nil {
				t.Fatal(err)
			}
			states := record(c)
			defer states.cancel()

			proxy.Cut()
			states.expect(t, testTimeout, connstate.Suspended)
			dctx, cancel := tt.deleteCtx(ctx)
			err = c.Delete(dctx, "/doomed", Guaranteed(), DeletingChildren())
			cancel()
			if err == nil {
				t.Fatal("Delete while cut returned nil: the caller must learn the node may still exist")
			}
			if st, err := watcher.Exists(ctx, "/doomed"); err != nil || st == nil {
				t.Fatalf("node gone while the client was cut off: %v, %v", st, err)
			}

			proxy.Restore()
			ev := waitEvent(t, deleted, testTimeout, "deletion by the guaranteed delete")
			if ev.Type != zk.EventNodeDeleted || ev.Path != "/doomed" {
				t.Fatalf("watch event %+v, want NodeDeleted on /doomed", ev)
			}
			if st, err := watcher.Exists(ctx, "/doomed"); err != nil || st != nil {
				t.Fatalf("Exists after the guaranteed delete: %v, %v", st, err)
			}
		})
	}
}

// A guaranteed delete that fails for a reason retrying cannot mend (here a
// version mismatch) is not repeated in the background.
func TestGuaranteedDeleteNotRetryable(t *testing.T) {
	ns := newNamespace(t)
	c := connectNS(t, ns)
	ctx := testCtx(t)
	if _, err := c.Create(ctx, "/kept", nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "/kept", Guaranteed(), WithVersion(7)); !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("Delete with a wrong version: %v, want zk.ErrBadVersion", err)
	}
	if err := c.Delete(ctx, "/missing", Guaranteed()); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("Delete of a missing node: %v, want zk.ErrNoNode", err)
	}
	if err := c.Delete(ctx, "/missing", Guaranteed(), Quietly()); err != nil {
		t.Fatalf("quiet Delete of a missing node: %v", err)
	}
	if st, err := c.Exists(ctx, "/kept"); err != nil || st == nil {
		t.Fatalf("node with another version was deleted: %v, %v", st, err)
	}
}

// A guaranteed delete still pending when the client closes stops with it:
// Close waits for it and leaves no goroutine (TestMain checks).
func TestGuaranteedDeleteStopsAtClose(t *testing.T) {
	srv := server(t)
	ns := newNamespace(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	c := connect(t, proxy.Addr(), WithNamespace(ns), WithSessionTimeout(10*time.Second),
		WithRetryPolicy(retry.NTimes(0, 0)))
	ctx := testCtx(t)
	if _, err := c.Create(ctx, "/stays", nil); err != nil {
		t.Fatal(err)
	}
	states := record(c)
	defer states.cancel()
	proxy.Cut()
	states.expect(t, testTimeout, connstate.Suspended)
	if err := c.Delete(ctx, "/stays", Guaranteed()); err == nil {
		t.Fatal("Delete while cut returned nil")
	}
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		c.Close()
	}()
	waitClosed(t, closed, 10*time.Second, "Close with a guaranteed delete pending")
	if err := c.Delete(ctx, "/stays", Guaranteed()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Delete after Close: %v, want ErrClosed", err)
	}
	direct := connectNS(t, ns)
	if st, err := direct.Exists(ctx, "/stays"); err != nil || st == nil {
		t.Fatalf("node deleted although the client closed while cut off: %v, %v", st, err)
	}
}
