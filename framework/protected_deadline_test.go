package framework

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gocurator/curator/zktest"
)

// A protected create whose reply was lost, with the connection then down
// until its deadline, used to return ~5 s late: its clean-up (find the node
// by its UUID and delete it) ran in the foreground with a bound of its own,
// waiting for the connection. The caller's deadline is the call's deadline;
// the clean-up goes on in the background and deletes the node once the
// connection is back.
func TestProtectedCreateDeadlineWhileDisconnected(t *testing.T) {
	srv := server(t)
	ns := newNamespace(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	c := connect(t, proxy.Addr(), WithNamespace(ns), WithSessionTimeout(10*time.Second))
	direct := connectNS(t, ns)
	ctx := testCtx(t)
	if _, err := c.Create(ctx, "/dir", nil); err != nil {
		t.Fatal(err)
	}
	fired := proxy.LoseNextCreateReply()
	go func() {
		<-fired
		proxy.Cut() // and the connection stays down
	}()
	const wait = 1500 * time.Millisecond
	cctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	start := time.Now()
	p, err := c.Create(cctx, "/dir/node", nil, Protected())
	late := time.Since(start) - wait
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Create = %q, %v; want DeadlineExceeded", p, err)
	}
	t.Logf("Create returned %v after its deadline", late)
	// A bound, not a window: the regression cost the foreground clean-up's
	// own bound (cleanupTimeout, 5 s), far above scheduling delays.
	if late >= cleanupTimeout/2 {
		t.Fatalf("Create returned %v after its deadline", late)
	}
	if kids, _, err := direct.Children(ctx, "/dir"); err != nil || len(kids) != 1 {
		t.Fatalf("the server should hold the created node until the connection is back: %v, %v", kids, err)
	}
	proxy.Restore()
	eventually(t, testTimeout, "no node left by the failed create", func() (bool, error) {
		kids, _, err := direct.Children(ctx, "/dir")
		return err == nil && len(kids) == 0, err
	})
}
