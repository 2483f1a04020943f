package framework

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gocurator/curator/zktest"
)

// closeRaceRounds is how many creates each test below races with Close.
const closeRaceRounds = 40

// go-zookeeper's CreateTTL and CreateContainer read their reply even when
// they return ErrConnectionClosed because the connection's Close began,
// while its receive loop may still be decoding that reply into the same
// struct: a data race, which -race reports. The framework closes a
// connection only once such a call has returned. Each round writes a TTL
// create through a proxy that delays every frame, and closes the client as
// soon as the request is on the wire, so that the reply comes after Close
// began.
func TestTTLCreateRacingClose(t *testing.T) {
	testCreateRacingClose(t, PersistentWithTTL, WithTTL(time.Minute))
}

// The same race for a container create (go-zookeeper's CreateContainer,
// which the framework also calls for container parents and namespaces).
func TestContainerCreateRacingClose(t *testing.T) {
	testCreateRacingClose(t, Container)
}

func testCreateRacingClose(t *testing.T, mode Mode, opts ...CreateOption) {
	t.Parallel()
	srv := server(t)
	ns := newNamespace(t)
	admin := connectNS(t, ns)
	ctx := testCtx(t)
	// The namespace exists, so the create below is the only request.
	if _, err := admin.Create(ctx, "/ns", nil); err != nil {
		t.Fatal(err)
	}
	proxy := zktest.NewProxy(t, srv.Addr())
	proxy.SetDelay(2 * time.Millisecond)
	opts = append(opts, WithMode(mode))
	completed := 0
	for range closeRaceRounds {
		c, err := Connect(ctx, proxy.Addr(), WithNamespace(ns))
		if err != nil {
			t.Fatal(err)
		}
		w := c.wireOf(c.Conn())
		if w == nil {
			t.Fatal("no wire for the client's connection")
		}
		sent := w.Expect(c.full("/n"))
		done := make(chan error, 1)
		go func() {
			_, err := c.Create(context.Background(), "/n", []byte("d"), opts...)
			done <- err
		}()
		waitClosed(t, sent, testTimeout, "the create written")
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		err = waitEvent(t, done, testTimeout, "the create's return")
		switch {
		case err == nil:
			completed++
		case errors.Is(err, ErrClosed):
		default:
			t.Fatalf("create racing Close: %v", err)
		}
		// The server applied the create before the close of the session
		// (requests of a session are applied in order): the node exists
		// either way, and goes.
		if err := admin.Delete(ctx, "/n", Quietly()); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d of %d creates returned their node, the others ErrClosed", completed, closeRaceRounds)
	if err := admin.Delete(ctx, "/ns"); err != nil {
		t.Fatal(err)
	}
}

// A TTL create in flight when Close begins, on a server gone silent: its
// reply never comes, so Close waits for it only for a bound (replyDrain),
// then closes the socket first, which fails the create (ErrClosed), before
// go-zookeeper's Close; no race, and Close returns within the bound and
// go-zookeeper's own second.
func TestTTLCreateInFlightAtCloseOnSilentServer(t *testing.T) {
	t.Parallel()
	srv := server(t)
	ns := newNamespace(t)
	admin := connectNS(t, ns)
	ctx := testCtx(t)
	if _, err := admin.Create(ctx, "/ns", nil); err != nil {
		t.Fatal(err)
	}
	proxy := zktest.NewProxy(t, srv.Addr())
	c, err := Connect(ctx, proxy.Addr(), WithNamespace(ns), WithSessionTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	sent := c.wireOf(c.Conn()).Expect(c.full("/n"))
	proxy.BlackHole()
	done := make(chan error, 1)
	go func() {
		_, err := c.Create(context.Background(), "/n", nil, WithMode(PersistentWithTTL), WithTTL(time.Minute))
		done <- err
	}()
	waitClosed(t, sent, testTimeout, "the create written")
	begun := time.Now()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	took := time.Since(begun)
	if err := waitEvent(t, done, testTimeout, "the create's return"); !errors.Is(err, ErrClosed) {
		t.Fatalf("create at Close on a silent server = %v, want ErrClosed", err)
	}
	t.Logf("Close took %v", took)
	if limit := replyDrain + 2*time.Second; took > limit {
		t.Fatalf("Close took %v, want within %v", took, limit)
	}
	if st, err := admin.Exists(ctx, "/n"); err != nil || st != nil {
		t.Fatalf("the black-holed create reached the server: %+v, %v", st, err)
	}
	if err := admin.Delete(ctx, "/ns"); err != nil {
		t.Fatal(err)
	}
}
