package framework

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

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
			const wait = 100 * time.Millisecond
			cctx, cancel := context.WithTimeout(ctx, wait)
			start := time.Now()
			p, err := c.Create(cctx, tt.path, []byte("x"), tt.opts...)
			took := time.Since(start)
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Create = %q, %v; want context.DeadlineExceeded", p, err)
			}
			// The caller's ctx is its deadline: no wait for the reply.
			if took > wait+abandonDelay {
				t.Errorf("Create returned %v after its ctx's %v deadline", took-wait, wait)
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
