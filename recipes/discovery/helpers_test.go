package discovery_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/discovery"
)

// open returns a Discovery on c, closed at cleanup.
func open(t *testing.T, c *framework.Client, base string, opts ...discovery.Option) *discovery.Discovery {
	t.Helper()
	d := discovery.New(c, base, opts...)
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	return d
}

func stat(t *testing.T, c *framework.Client, path string) *zk.Stat {
	t.Helper()
	st, err := c.Exists(testkit.Ctx(t), path)
	if err != nil {
		t.Fatalf("exists %s: %v", path, err)
	}
	return st
}

func get(t *testing.T, c *framework.Client, path string) ([]byte, *zk.Stat) {
	t.Helper()
	b, st, err := c.Get(testkit.Ctx(t), path)
	if err != nil {
		t.Fatalf("get %s: %v", path, err)
	}
	return b, st
}

func instance(name, id string, port int) discovery.Instance {
	return discovery.Instance{Name: name, ID: id, Address: "10.0.0.1", Port: discovery.Int(port),
		RegistrationTimeUTC: 1700000000000, URISpec: discovery.DefaultURISpec()}
}

// changes records a ServiceCache's notifications.
type changes struct {
	mu    sync.Mutex
	lists [][]discovery.Instance
	more  chan struct{}
}

func listen(t *testing.T, s *discovery.ServiceCache) *changes {
	ch := &changes{more: make(chan struct{}, 1)}
	cancel := s.Listen(func(l []discovery.Instance) {
		ch.mu.Lock()
		ch.lists = append(ch.lists, l)
		ch.mu.Unlock()
		select {
		case ch.more <- struct{}{}:
		default:
		}
	})
	t.Cleanup(cancel)
	return ch
}

func (ch *changes) count() int {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return len(ch.lists)
}

// awaitIDs waits until the cache holds exactly the instances ids.
func awaitIDs(t *testing.T, s *discovery.ServiceCache, ids ...string) {
	t.Helper()
	testkit.Eventually(t, "cache holds "+joinIDs(ids), func() bool { return joinIDs(idsOf(s.Instances())) == joinIDs(ids) })
}

func idsOf(l []discovery.Instance) []string {
	out := make([]string, len(l))
	for i, inst := range l {
		out[i] = inst.ID
	}
	return out
}

func joinIDs(ids []string) string {
	s := "["
	for i, id := range ids {
		if i > 0 {
			s += " "
		}
		s += id
	}
	return s + "]"
}

func withTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(testkit.Ctx(t), d)
	t.Cleanup(cancel)
	return ctx
}
