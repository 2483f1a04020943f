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

// abandonDelay is the proxy's one-way delay in the tests below: far longer
// than the caller's ctx, so the request reaches the server, and is
// applied, after the caller has returned.
const abandonDelay = 400 * time.Millisecond

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
	return w.expect(c.full(path))
}

// abandonOnSend returns a ctx for a create of path by c that is cancelled
// as soon as the request is written to the connection; for a protected
// create, whose name is random so the wire cannot be asked, a 100ms
// deadline instead (the reply comes no sooner than 2*abandonDelay).
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
// closed node.Node. Whatever the create's kind, the call returns at its
// ctx's end, and a node its late request makes is deleted once the reply
// says it was made.
func TestAbandonedCreateLeavesNothing(t *testing.T) {
	tests := []struct {
		name string
		path string
		opts []CreateOption
	}{
		{"persistent", "/dir/n", nil},
		{"ephemeral", "/dir/n", []CreateOption{WithMode(Ephemeral)}},
		{"persistent sequential", "/dir/n-", []CreateOption{WithMode(PersistentSequential)}},
		{"ephemeral sequential", "/dir/n-", []CreateOption{WithMode(EphemeralSequential)}},
		{"protected ephemeral sequential", "/dir/n-", []CreateOption{WithMode(EphemeralSequential), Protected()}},
		{"protected persistent", "/dir/n", []CreateOption{Protected()}},
		{"container", "/dir/n", []CreateOption{WithMode(Container)}},
		{"ttl", "/dir/n", []CreateOption{WithMode(PersistentWithTTL), WithTTL(time.Hour)}},
		{"with stat and listing", "/dir/n", []CreateOption{WithMode(Ephemeral), StoringStatIn(new(zk.Stat)), ListingParent(new([]string))}},
		{"idempotent", "/dir/n", []CreateOption{Idempotent()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			c, proxy, direct := abandonedClient(t)
			_, _, childW, err := direct.ChildrenW(ctx, "/dir")
			if err != nil {
				t.Fatal(err)
			}
			proxy.SetDelay(abandonDelay)
			var o createOptions
			for _, opt := range tt.opts {
				_ = opt.applyCreate(&o)
			}
			cctx, cancel := abandonOnSend(ctx, c, tt.path, o.protected)
			start := time.Now()
			p, err := c.Create(cctx, tt.path, []byte("x"), tt.opts...)
			took := time.Since(start)
			cancel()
			if cctx.Err() == nil || !errors.Is(err, cctx.Err()) {
				t.Fatalf("Create = %q, %v; want its ctx's error", p, err)
			}
			// ctx is the caller's deadline: no wait for the reply, which
			// comes two delays after the request was sent.
			if took >= 2*abandonDelay {
				t.Errorf("Create returned after %v: it waited for the reply", took)
			}
			// The request lands after the caller returned...
			waitEvent(t, childW, testTimeout, "the node the abandoned create made")
			// ...and its node is deleted once its reply is in.
			eventually(t, testTimeout/2, "no node left by the abandoned create", func() (bool, error) {
				kids, _, err := direct.Children(ctx, "/dir")
				return err == nil && len(kids) == 0, err
			})
			proxy.SetDelay(0)
		})
	}
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
			var r result
			if abandon {
				cancel()
				r = <-done
			}
			// The request is on its way (it takes delay to arrive).
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if !abandon {
				r = <-done
			}
			waitEvent(t, childW, testTimeout, "the node the create made")
			if err := direct.Sync(ctx, "/dir"); err != nil {
				t.Fatal(err)
			}
			kids, _, err := direct.Children(ctx, "/dir")
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case r.err == nil && (abandon || len(kids) != 1):
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
	proxy.SetDelay(abandonDelay)
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
