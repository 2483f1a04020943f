package node_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/node"
)

// recorder keeps a Node's events, in order.
type recorder struct {
	mu     sync.Mutex
	events []node.Event
	more   chan struct{}
	cancel func()
}

func record(t *testing.T, n *node.Node) *recorder {
	r := &recorder{more: make(chan struct{}, 1)}
	r.cancel = n.Listen(func(ev node.Event) {
		r.mu.Lock()
		r.events = append(r.events, ev)
		r.mu.Unlock()
		select {
		case r.more <- struct{}{}:
		default:
		}
	})
	t.Cleanup(r.cancel)
	return r
}

func (r *recorder) all() []node.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]node.Event(nil), r.events...)
}

// await waits for an event after the first from that matches, and returns
// it with the index after it.
func (r *recorder) await(t *testing.T, from int, what string, match func(node.Event) bool) (node.Event, int) {
	t.Helper()
	timer := time.NewTimer(testkit.Deadline)
	defer timer.Stop()
	for {
		evs := r.all()
		for i := from; i < len(evs); i++ {
			if match(evs[i]) {
				return evs[i], i + 1
			}
		}
		select {
		case <-r.more:
		case <-timer.C:
			t.Fatalf("timed out waiting for %s; events %+v", what, evs)
		}
	}
}

func registered(ev node.Event) bool { return ev.State == node.Registered }

func recreating(reason error) func(node.Event) bool {
	return func(ev node.Event) bool { return ev.State == node.Recreating && errors.Is(ev.Reason, reason) }
}

// stat reads path's Stat through c; nil if missing.
func stat(t *testing.T, c *framework.Client, path string) *zk.Stat {
	t.Helper()
	st, err := c.Exists(testkit.Ctx(t), path)
	if err != nil {
		t.Fatalf("exists %s: %v", path, err)
	}
	return st
}

// data reads path's data through c.
func data(t *testing.T, c *framework.Client, path string) string {
	t.Helper()
	b, _, err := c.Get(testkit.Ctx(t), path)
	if err != nil {
		t.Fatalf("get %s: %v", path, err)
	}
	return string(b)
}

func start(t *testing.T, n *node.Node) {
	t.Helper()
	if err := n.Start(testkit.Ctx(t)); err != nil {
		t.Fatalf("start: %v", err)
	}
}

func closeNode(t *testing.T, n *node.Node) {
	t.Helper()
	if err := n.Close(testkit.Ctx(t)); err != nil {
		t.Fatalf("close: %v", err)
	}
}
