package semaphore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/zktest"
)

const semPath = "/semaphores/workers"

// mode is one of the two layouts; every behaviour is tested in both.
type mode struct {
	name string
	opts []semaphore.Option
	v2   bool
}

var modes = []mode{
	{name: "V1", opts: []semaphore.Option{semaphore.CuratorV1()}},
	{name: "V2", opts: []semaphore.Option{semaphore.CuratorV2()}, v2: true},
}

// with returns the mode's options followed by more.
func (m mode) with(more ...semaphore.Option) []semaphore.Option {
	return append(append([]semaphore.Option{}, m.opts...), more...)
}

// leaseDir is where the mode keeps lease nodes.
func (m mode) leaseDir(path string) string {
	if m.v2 {
		return path + "/leases"
	}
	return path
}

// waitChildren waits until cond holds for the children of path (nil while
// path is missing), polling the server. The "leases" and "locks"
// directories are left out of the listing: they are containers (the V1
// layout keeps its participants' traces in leases/ too), and the tests
// that count what is in them list them by their own paths.
func waitChildren(t testing.TB, c *framework.Client, path, what string, cond func([]string) bool) {
	t.Helper()
	testkit.Eventually(t, what, func() bool { return cond(withoutDirs(testkit.Children(t, c, path))) })
}

// withoutDirs returns children without "leases" and "locks".
func withoutDirs(children []string) []string {
	out := children[:0:0]
	for _, ch := range children {
		if ch != "leases" && ch != "locks" {
			out = append(out, ch)
		}
	}
	return out
}

// leaseChildren lists the children of m's lease directory at path, leaving
// out the V2 directories (for V1: the traces' container, see
// v1TracesGone).
func leaseChildren(t testing.TB, c *framework.Client, m mode, path string) []string {
	t.Helper()
	return withoutDirs(testkit.Children(t, c, m.leaseDir(path)))
}

// v1TracesGone waits until no V1 participant's trace is left in
// path/leases (the container may stay, for the server to reap).
func v1TracesGone(t testing.TB, c *framework.Client, path string) {
	t.Helper()
	waitEmpty(t, c, path+"/leases")
}

// v1 is the V1 mode's options followed by more.
func v1(more ...semaphore.Option) []semaphore.Option { return modes[0].with(more...) }

// waitEmpty waits until path has no children.
func waitEmpty(t testing.TB, c *framework.Client, path string) {
	t.Helper()
	waitChildren(t, c, path, path+" is empty", func(ch []string) bool { return len(ch) == 0 })
}

// waitCount waits until path has n children.
func waitCount(t testing.TB, c *framework.Client, path string, n int) {
	t.Helper()
	waitChildren(t, c, path, fmt.Sprintf("%s has %d children", path, n), func(ch []string) bool { return len(ch) == n })
}

// result is what an Acquire in a goroutine returned.
type result struct {
	lease *semaphore.Lease
	err   error
}

// acquireAsync starts s.Acquire(ctx) and returns where its result goes.
func acquireAsync(ctx context.Context, s *semaphore.Semaphore) <-chan result {
	out := make(chan result, 1)
	go func() {
		l, err := s.Acquire(ctx)
		out <- result{l, err}
	}()
	return out
}

// await returns the result of an acquireAsync, failing after
// testkit.Deadline.
func await(t testing.TB, ch <-chan result) result {
	t.Helper()
	timer := time.NewTimer(testkit.Deadline)
	defer timer.Stop()
	select {
	case r := <-ch:
		return r
	case <-timer.C:
		t.Fatal("acquire did not return")
		return result{}
	}
}

// pending fails the test if an acquireAsync has returned already.
func pending(t testing.TB, ch <-chan result, what string) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("%s: acquire returned %v, %v; want it still waiting", what, r.lease, r.err)
	default:
	}
}

// mustRelease releases l.
func mustRelease(t testing.TB, l *semaphore.Lease) {
	t.Helper()
	if err := l.Release(testkit.Ctx(t)); err != nil {
		t.Fatalf("release %s: %v", l.Node(), err)
	}
}

// sessionTimeout is the session timeout of clients whose session a test
// loses; the server's tickTime (200ms) allows it.
const sessionTimeout = time.Second

// shortWait is the deadline of acquires that are meant to time out.
const shortWait = 400 * time.Millisecond

// newProxy returns a fault proxy in front of the package's server.
func newProxy(t testing.TB) *zktest.Proxy { return zktest.NewProxy(t, zkAddr) }

// leaseNodes lists the lease nodes of mode m at semPath: V1 nodes carry
// "lock-" (the path may also hold V2 directories), V2 nodes are the
// children of leases/.
func leaseNodes(t testing.TB, c *framework.Client, m mode) []string {
	t.Helper()
	var out []string
	for _, n := range testkit.Children(t, c, m.leaseDir(semPath)) {
		if m.v2 || strings.Contains(n, "lock-") {
			out = append(out, n)
		}
	}
	return out
}
