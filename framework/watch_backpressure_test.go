package framework

import (
	"fmt"
	"testing"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/zktest"
)

// The Watcher's queue with a slow consumer: a parent changed, its child
// deleted, then the parent deleted, heard deepest first (the coalesced
// parent event does not jump ahead of its child's), in both modes.
func TestWatchSlowConsumerKeepsOrder(t *testing.T) {
	for _, mode := range []struct {
		name string
		opts []WatchOption
	}{{"persistent", []WatchOption{Recursive()}}, {"one-shot", []WatchOption{Recursive(), OneShot()}}} {
		t.Run(mode.name, func(t *testing.T) {
			c := connectNS(t, newNamespace(t))
			other := connectNS(t, c.Namespace())
			ctx := testCtx(t)
			if _, err := other.Create(ctx, "/r/p/c", nil, CreatingParents()); err != nil {
				t.Fatal(err)
			}
			w, err := c.Watch(ctx, "/r", mode.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			// The goroutine feeding Events holds the first event in hand:
			// let it be another path's, so that the rest queue.
			if _, err := other.Create(ctx, "/r/first", nil); err != nil {
				t.Fatal(err)
			}
			eventually(t, testTimeout, "the first event taken", func() (bool, error) {
				return w.q.Len() == 0, nil
			})
			if _, err := other.Set(ctx, "/r/p", []byte("1"), -1); err != nil {
				t.Fatal(err)
			}
			if err := other.Delete(ctx, "/r/p/c"); err != nil {
				t.Fatal(err)
			}
			if err := other.Delete(ctx, "/r/p"); err != nil {
				t.Fatal(err)
			}
			// Nobody read meanwhile; now the events.
			var got []string
			for _, ev := range collect(t, w, func(ev WatchEvent) bool { return ev.Type == WatchDeleted && ev.Path == "/r/p" }) {
				if ev.Type == WatchDeleted {
					got = append(got, ev.Path)
				}
			}
			if fmt.Sprint(got) != "[/r/p/c /r/p]" {
				t.Fatalf("deletions heard %v, want /r/p/c before /r/p", got)
			}
		})
	}
}

// A consumer that reads nothing through reconnections, a session expiry
// and an unreadable node in the tree: the queue holds one event per path
// and one resync whatever their number, the client is not held up, and
// once read the events end with the resync of the new session, after
// which changes come again; in both modes.
func TestWatchBlockedConsumerBounded(t *testing.T) {
	for _, mode := range []struct {
		name string
		opts []WatchOption
	}{{"persistent", []WatchOption{Recursive()}}, {"one-shot", []WatchOption{Recursive(), OneShot()}}} {
		t.Run(mode.name, func(t *testing.T) {
			owner, stranger, proxy, expire := expiringStranger(t)
			ctx := testCtx(t)
			if _, err := owner.Create(ctx, "/r/open", nil, CreatingParents()); err != nil {
				t.Fatal(err)
			}
			if _, err := owner.Create(ctx, "/r/secret", nil, WithACL(ownerOnly)); err != nil {
				t.Fatal(err)
			}
			w, err := stranger.Watch(ctx, "/r", mode.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			bounded := func(when string) {
				t.Helper()
				// /r/open, /r/marker (expire's), the resync; one more
				// path may be in the hand of the goroutine feeding Events.
				if n, places := w.q.Len(), w.q.Places(); n > 4 || places > 2*n+64 {
					t.Fatalf("%s: %d events pending at %d places", when, n, places)
				}
			}
			for i := range 5 {
				cutAndRestore(t, stranger, proxy)
				if _, err := owner.Set(ctx, "/r/open", []byte{byte(i)}, -1); err != nil {
					t.Fatal(err)
				}
				// The client's own calls go on.
				if _, err := stranger.Exists(ctx, "/r/open"); err != nil {
					t.Fatal(err)
				}
				bounded(fmt.Sprintf("after %d reconnections", i+1))
			}
			expire()
			bounded("after expiry")
			collect(t, w, func(ev WatchEvent) bool { return ev.Type == WatchResync && ev.NewSession })
			if _, err := owner.Create(ctx, "/r/after", nil); err != nil {
				t.Fatal(err)
			}
			collect(t, w, func(ev WatchEvent) bool { return ev.Type == WatchCreated && ev.Path == "/r/after" })
		})
	}
}

// cutAndRestore cuts c's proxy p and waits for the reconnection.
func cutAndRestore(t *testing.T, c *Client, p *zktest.Proxy) {
	t.Helper()
	states := record(c)
	defer states.cancel()
	p.Cut()
	states.expect(t, testTimeout, connstate.Suspended)
	p.Restore()
	states.expect(t, testTimeout, connstate.Reconnected)
}
