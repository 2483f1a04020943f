package framework

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gocurator/curator/zktest"
)

// The proxy's one-way delay in the tests below. A caller whose ctx ends
// with its create on the way waits for the reply, and deletes what it
// made, for at most cleanupGrace (a round trip): with shortDelay it has
// done both when it returns; with longDelay the request reaches the server
// only after the caller returned, and the attempt cleans up when the reply
// comes.
const (
	shortDelay = 150 * time.Millisecond
	longDelay  = cleanupGrace + 500*time.Millisecond
)

// abandonedClient connects through a proxy in a fresh namespace, makes
// /dir, and returns the client, the proxy and a direct client on the same
// namespace that sees the server's truth.
func abandonedClient(t *testing.T, opts ...Option) (*Client, *zktest.Proxy, *Client) {
	t.Helper()
	ns := newNamespace(t)
	proxy := zktest.NewProxy(t, server(t).Addr())
	c := connect(t, proxy.Addr(), append([]Option{WithNamespace(ns), WithSessionTimeout(20 * time.Second)}, opts...)...)
	direct := connectNS(t, ns)
	if _, err := direct.Create(testCtx(t), "/dir", nil); err != nil {
		t.Fatal(err)
	}
	return c, proxy, direct
}

// createSent returns a channel closed once c has written a create
// request for path (as the caller names it) to its connection.
func createSent(c *Client, path string) <-chan struct{} {
	c.mu.Lock()
	w := c.h.wire
	c.mu.Unlock()
	return w.Expect(c.full(path))
}

// abandonOnSend returns a ctx for a create of path by c that is cancelled
// as soon as the request is written to the connection; for a protected
// create, whose name is random so the wire cannot be asked, a 100ms
// deadline instead (its reply comes no sooner than two delays).
func abandonOnSend(ctx context.Context, c *Client, path string, protected bool) (context.Context, context.CancelFunc) {
	if protected {
		return context.WithTimeout(ctx, 100*time.Millisecond)
	}
	sent := createSent(c, path)
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-sent:
			cancel()
		case <-cctx.Done():
		}
	}()
	return cctx, cancel
}

// Pitfall 25 (issue 33, item 1): a create whose caller stopped waiting
// (its ctx ended while the request was on its way) was still applied
// after the call returned, and the node stayed: the ghost member of a
// closed node.Node. Whatever the create's kind, the call returns within a
// round trip of its ctx's end (cleanupGrace), and what its request makes
// is gone: at the return, when the reply came within that round trip, or
// once the reply comes, when the request reaches the server only after
// the call returned.
func TestAbandonedCreateLeavesNothing(t *testing.T) {
	tests := []struct {
		name string
		path string
		opts []CreateOption
		late bool // also with the request landing after the return
	}{
		{"persistent", "/dir/n", nil, true},
		{"ephemeral", "/dir/n", []CreateOption{WithMode(Ephemeral)}, true},
		{"persistent sequential", "/dir/n-", []CreateOption{WithMode(PersistentSequential)}, true},
		{"ephemeral sequential", "/dir/n-", []CreateOption{WithMode(EphemeralSequential)}, false},
		{"protected ephemeral sequential", "/dir/n-", []CreateOption{WithMode(EphemeralSequential), Protected()}, true},
		{"protected persistent", "/dir/n", []CreateOption{Protected()}, false},
		{"container", "/dir/n", []CreateOption{WithMode(Container)}, false},
		{"ttl", "/dir/n", []CreateOption{WithMode(PersistentWithTTL), WithTTL(time.Hour)}, false},
		{"with stat and listing", "/dir/n", []CreateOption{WithMode(Ephemeral), StoringStatIn(new(zk.Stat)), ListingParent(new([]string))}, true},
		{"idempotent", "/dir/n", []CreateOption{Idempotent()}, false},
	}
	for _, tt := range tests {
		for _, late := range []bool{false, true} {
			if late && !tt.late {
				continue
			}
			name := tt.name + "/on return"
			if late {
				name = tt.name + "/landing late"
			}
			t.Run(name, func(t *testing.T) {
				abandonCreate(t, tt.path, late, tt.opts...)
			})
		}
	}
}

// abandonCreate makes a create of path through a delaying proxy, ends its
// ctx once it is on its way, and checks what TestAbandonedCreateLeavesNothing
// says.
func abandonCreate(t *testing.T, path string, late bool, opts ...CreateOption) {
	ctx := testCtx(t)
	c, proxy, direct := abandonedClient(t)
	_, _, childW, err := direct.ChildrenW(ctx, "/dir")
	if err != nil {
		t.Fatal(err)
	}
	delay := shortDelay
	if late {
		delay = longDelay
	}
	proxy.SetDelay(delay)
	var o createOptions
	for _, opt := range opts {
		_ = opt.applyCreate(&o)
	}
	cctx, cancel := abandonOnSend(ctx, c, path, o.protected)
	start := time.Now()
	p, err := c.Create(cctx, path, []byte("x"), opts...)
	took := time.Since(start)
	cancel()
	if cctx.Err() == nil || !errors.Is(err, cctx.Err()) {
		t.Fatalf("Create = %q, %v; want its ctx's error", p, err)
	}
	// ctx is the caller's deadline, stretched by a round trip at most.
	if bound := 100*time.Millisecond + cleanupGrace + 500*time.Millisecond; took > bound {
		t.Errorf("Create returned after %v, past %v", took, bound)
	}
	if !late {
		// The node was made, and is gone by the return.
		waitEvent(t, childW, testTimeout, "the node the abandoned create made")
		if err := direct.Sync(ctx, "/dir"); err != nil {
			t.Fatal(err)
		}
		if kids, _, err := direct.Children(ctx, "/dir"); err != nil || len(kids) != 0 {
			t.Fatalf("on return: the server holds %v (%v); want nothing", kids, err)
		}
		proxy.SetDelay(0)
		return
	}
	// The request lands after the caller returned...
	waitEvent(t, childW, testTimeout, "the node the abandoned create made")
	// ...and its node is deleted once its reply is in.
	eventually(t, testTimeout/2, "no node left by the abandoned create", func() (bool, error) {
		kids, _, err := direct.Children(ctx, "/dir")
		return err == nil && len(kids) == 0, err
	})
	proxy.SetDelay(0)
}

// A create in flight when Close begins: Close waits (briefly) for its
// reply, so the caller who still waits is told the truth (the path, when
// the node was made), and a create whose caller had already left is
// deleted before the session ends. Before, Close failed the call with
// ErrClosed while its request went on to be applied: a persistent node
// nobody was told of.
func TestCreateRacingCloseLeavesNothingUntold(t *testing.T) {
	const delay = 150 * time.Millisecond // a round trip well inside Close's drain bound
	for _, abandon := range []bool{false, true} {
		name := "waiting"
		if abandon {
			name = "abandoned"
		}
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t)
			c, proxy, direct := abandonedClient(t)
			_, _, childW, err := direct.ChildrenW(ctx, "/dir")
			if err != nil {
				t.Fatal(err)
			}
			proxy.SetDelay(delay)
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			type result struct {
				p   string
				err error
			}
			done := make(chan result, 1)
			sent := createSent(c, "/dir/n")
			go func() {
				p, err := c.Create(cctx, "/dir/n", nil)
				done <- result{p, err}
			}()
			waitClosed(t, sent, testTimeout, "the create sent")
			if abandon {
				// The caller gives up; Close, racing its clean-up, ends
				// its wait for the reply.
				cancel()
			}
			// The request is on its way (it takes delay to arrive).
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			r := <-done
			waitEvent(t, childW, testTimeout, "the node the create made")
			if err := direct.Sync(ctx, "/dir"); err != nil {
				t.Fatal(err)
			}
			kids, _, err := direct.Children(ctx, "/dir")
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case r.err == nil && len(kids) != 1:
				t.Fatalf("Create = %q, nil; server holds %v", r.p, kids)
			case r.err != nil && len(kids) != 0:
				t.Fatalf("Create = %v, yet the server holds %v", r.err, kids)
			}
		})
	}
}

// The clean-up of an abandoned create deletes only the node the create
// made, untouched: a node someone wrote to between the create and the
// late reply was taken up (a node.Node adopting a node of its session
// does that), and deleting it would undo their write.
func TestAbandonedCreateLeavesNodeTakenUp(t *testing.T) {
	ctx := testCtx(t)
	core, logs := observer.New(zap.InfoLevel)
	c, proxy, direct := abandonedClient(t, WithLogger(zap.New(core)))
	_, _, childW, err := direct.ChildrenW(ctx, "/dir")
	if err != nil {
		t.Fatal(err)
	}
	proxy.SetDelay(longDelay)
	cctx, cancel := abandonOnSend(ctx, c, "/dir/n", false)
	_, err = c.Create(cctx, "/dir/n", []byte("x"))
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Create = %v, want context.Canceled", err)
	}
	waitEvent(t, childW, testTimeout, "the node the abandoned create made")
	// Taken up before the reply reaches the client (a delay away).
	if _, err := direct.Set(ctx, "/dir/n", []byte("mine"), 0); err != nil {
		t.Fatal(err)
	}
	eventually(t, testTimeout/2, "the clean-up's look at the node", func() (bool, error) {
		return logs.FilterMessage("node of an abandoned create taken up since; left").Len() > 0, nil
	})
	proxy.SetDelay(0)
	if data, st, err := direct.Get(ctx, "/dir/n"); err != nil || string(data) != "mine" || st.Version != 1 {
		t.Fatalf("the node taken up: %q, %+v, %v; want it as written", data, st, err)
	}
}
