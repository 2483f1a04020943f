package framework

import (
	"errors"
	"testing"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/zktest"
)

// Unwatch removes a one-shot watch from the server once nothing else of
// the session needs it (counted with wchc), keeps it out of the watches
// set again after a reconnection, and leaves the others alone.
func TestUnwatchRemovesAbandonedOneShots(t *testing.T) {
	srv := server(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	c := connect(t, proxy.Addr(), WithNamespace(newNamespace(t)))
	ctx := testCtx(t)
	for _, p := range []string{"/u", "/v"} {
		if _, err := c.Create(ctx, p, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Two GetW and an ExistsW share the server's data watch on /u.
	for range 2 {
		if _, _, _, err := c.GetW(ctx, "/u"); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := c.ExistsW(ctx, "/u"); err != nil {
		t.Fatal(err)
	}
	// An exists watch on a missing node (pitfall 9) and one to keep.
	if _, _, err := c.ExistsW(ctx, "/missing"); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := c.GetW(ctx, "/v"); err != nil {
		t.Fatal(err)
	}
	awaitServerWatches(t, srv.Addr(), c, c.full("/u"), c.full("/v"), c.full("/missing"))

	if err := c.Unwatch(ctx, "/missing", ExistWatch); err != nil {
		t.Fatal(err)
	}
	awaitServerWatches(t, srv.Addr(), c, c.full("/u"), c.full("/v"))
	for i, k := range []WatchKind{DataWatch, ExistWatch, DataWatch} {
		if got := serverWatches(t, srv.Addr(), c.SessionID()); !contains(got, c.full("/u")) {
			t.Fatalf("after %d of 3 given back, /u's watch is gone: %v", i, got)
		}
		if err := c.Unwatch(ctx, "/u", k); err != nil {
			t.Fatal(err)
		}
	}
	awaitServerWatches(t, srv.Addr(), c, c.full("/v"))
	// Nothing left to give back: a no-op.
	if err := c.Unwatch(ctx, "/u", DataWatch); err != nil {
		t.Fatal(err)
	}

	// go-zookeeper still lists the abandoned watches: they are not set
	// again on the next connection; /v is.
	states := record(c)
	defer states.cancel()
	proxy.Cut()
	states.expect(t, testTimeout, connstate.Suspended)
	proxy.Restore()
	states.expect(t, testTimeout, connstate.Reconnected)
	if _, err := c.Exists(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	awaitServerWatches(t, srv.Addr(), c, c.full("/v"))

	// A new watch on a given-back path is set again as usual.
	_, _, ch, err := c.GetW(ctx, "/u")
	if err != nil {
		t.Fatal(err)
	}
	awaitServerWatches(t, srv.Addr(), c, c.full("/u"), c.full("/v"))
	if _, err := c.Set(ctx, "/u", []byte("x"), -1); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, ch, testTimeout, "GetW after Unwatch")
}

func contains(v []string, s string) bool {
	for _, x := range v {
		if x == s {
			return true
		}
	}
	return false
}

func TestUnwatchBadInput(t *testing.T) {
	c := connectNS(t, newNamespace(t))
	ctx := testCtx(t)
	if err := c.Unwatch(ctx, "rel", DataWatch); !errors.Is(err, ErrInvalidPath) {
		t.Errorf("relative path: %v", err)
	}
	if err := c.Unwatch(ctx, "/a", WatchKind(9)); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("bad kind: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Unwatch(ctx, "/a", DataWatch); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}

// A one-shot watch served from a persistent one and given back no longer
// keeps the server's watch once the Watcher goes.
func TestUnwatchOneShotServedByPersistent(t *testing.T) {
	srv := server(t)
	c := connectNS(t, newNamespace(t))
	ctx := testCtx(t)
	if _, err := c.Create(ctx, "/s", nil); err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(ctx, "/s")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := c.GetW(ctx, "/s"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.ExistsW(ctx, "/s"); err != nil {
		t.Fatal(err)
	}
	awaitServerWatches(t, srv.Addr(), c, c.full("/s"))
	if err := c.Unwatch(ctx, "/s", DataWatch); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// The exists one-shot still holds it.
	awaitServerWatches(t, srv.Addr(), c, c.full("/s"))
	if err := c.Unwatch(ctx, "/s", ExistWatch); err != nil {
		t.Fatal(err)
	}
	awaitServerWatches(t, srv.Addr(), c)
}
