package oneshot

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

const testTimeout = 20 * time.Second

// connClient is Client on a go-zookeeper connection to the package's
// server: the reads as they are, Unwatch recorded (go-zookeeper cannot
// remove a watch), and no state change ever.
type connClient struct {
	conn *zk.Conn

	mu        sync.Mutex
	unwatched []string // "kind path"
}

func (c *connClient) Exists(_ context.Context, path string) (*zk.Stat, error) {
	ok, st, err := c.conn.Exists(path)
	if !ok {
		st = nil
	}
	return st, err
}

func (c *connClient) ExistsW(_ context.Context, path string) (*zk.Stat, <-chan zk.Event, error) {
	ok, st, ch, err := c.conn.ExistsW(path)
	if !ok {
		st = nil
	}
	return st, ch, err
}

func (c *connClient) GetW(_ context.Context, path string) ([]byte, *zk.Stat, <-chan zk.Event, error) {
	return c.conn.GetW(path)
}

func (c *connClient) ChildrenW(_ context.Context, path string) ([]string, *zk.Stat, <-chan zk.Event, error) {
	return c.conn.ChildrenW(path)
}

func (c *connClient) Unwatch(_ context.Context, path string, kind Kind) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unwatched = append(c.unwatched, fmt.Sprintf("%d %s", kind, path))
	return nil
}

func (c *connClient) StateChanged() <-chan struct{} { return make(chan struct{}) }

func (c *connClient) Closed() bool { return false }

func (c *connClient) givenBack() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.unwatched...)
}

// rig is one test's run: its connection, its root and the events seen.
type rig struct {
	t       *testing.T
	c       *connClient
	root    string
	events  chan Event
	stop    chan struct{}
	done    chan struct{}
	armed   chan struct{}
	refuse  chan error
	started bool // start was called
}

// roots numbers the tests' roots, so that a test run again (-count) has a
// fresh one.
var roots atomic.Int64

// newRig connects, makes a root of the test's own (removed at the end)
// and returns the rig; start runs the watch.
func newRig(t *testing.T) *rig {
	t.Helper()
	conn, _, err := zk.Connect([]string{srv.Addr()}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{
		t: t, c: &connClient{conn: conn},
		root:   fmt.Sprintf("/%s-%d-%d", strings.NewReplacer("/", "-", " ", "-").Replace(t.Name()), time.Now().UnixNano(), roots.Add(1)),
		events: make(chan Event, 1024),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
		armed:  make(chan struct{}),
		refuse: make(chan error, 1),
	}
	t.Cleanup(func() {
		r.end()
		r.deleteAll(r.root)
		conn.Close()
	})
	return r
}

// start runs w (Path and Client filled in) on its own goroutine and waits
// until it is armed or refused.
func (r *rig) start(w Watch, tree bool) {
	r.t.Helper()
	r.started = true
	w.Client, w.Emit = r.c, func(ev Event) { r.events <- ev }
	w.Armed = func() { close(r.armed) }
	w.Refused = func(err error) { r.refuse <- err }
	if w.Path == "" {
		w.Path = r.root
	}
	go func() {
		defer close(r.done)
		if tree {
			w.RunTree(context.Background(), r.stop)
		} else {
			w.RunNode(context.Background(), r.stop)
		}
	}()
	select {
	case <-r.armed:
	case <-r.done:
	case <-time.After(testTimeout):
		r.t.Fatal("not armed")
	}
}

// end stops the run and waits for it.
func (r *rig) end() {
	if !r.started {
		return
	}
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	select {
	case <-r.done:
	case <-time.After(testTimeout):
		r.t.Fatal("the run did not end")
	}
}

// expect receives the events want, in order, and fails on any other.
func (r *rig) expect(want ...Event) {
	r.t.Helper()
	for _, w := range want {
		select {
		case ev := <-r.events:
			ev.Zxid = 0 // checked where it matters
			if ev != w {
				r.t.Fatalf("event %+v, want %+v", ev, w)
			}
		case <-time.After(testTimeout):
			r.t.Fatalf("no event, want %+v", w)
		}
	}
}

func (r *rig) path(rel string) string {
	if rel == "" {
		return r.root
	}
	return r.root + "/" + rel
}

func (r *rig) deleteAll(path string) {
	kids, _, _ := r.c.conn.Children(path) // none if unreadable
	for _, k := range kids {
		r.deleteAll(path + "/" + k)
	}
	_ = r.c.conn.Delete(path, -1)
}
