package rwlock_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/rwlock"
	"github.com/gocurator/curator/zktest"
)

// server is the one ZooKeeper server of the package's tests and benchmarks.
// Every test works in a namespace of its own.
var server *zktest.Server

// withServer runs the tests with server up, and closes it before goleak
// looks for leaked goroutines.
type withServer struct{ m *testing.M }

func (w withServer) Run() int {
	s, err := zktest.Launch()
	if err != nil {
		fmt.Fprintf(os.Stderr, "rwlock tests: %v\n", err)
		return 1
	}
	server = s
	code := w.m.Run()
	if err := s.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "rwlock tests: %v\n", err)
		code = 1
	}
	return code
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(withServer{m}) }

const (
	// waitTimeout bounds every wait for something that should happen.
	waitTimeout = 20 * time.Second
	// sessionTimeout is the session of test clients, long enough that no
	// session expires unless a test wants it to.
	sessionTimeout = 10 * time.Second
)

var nsSeq atomic.Int64

var nsUnsafe = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// namespace returns a namespace of the test's own.
func namespace(t testing.TB) string {
	return fmt.Sprintf("rwlock-%s-%d", nsUnsafe.ReplaceAllString(t.Name(), "_"), nsSeq.Add(1))
}

// connect returns a client of addr (the package's server when "") in
// namespace ns, closed when the test ends.
func connect(t testing.TB, addr, ns string, opts ...framework.Option) *framework.Client {
	t.Helper()
	if addr == "" {
		addr = server.ConnectString()
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	all := append([]framework.Option{framework.WithSessionTimeout(sessionTimeout), framework.WithNamespace(ns)}, opts...)
	c, err := framework.Connect(ctx, addr, all...)
	if err != nil {
		t.Fatalf("connect %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ctxFor(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	t.Cleanup(cancel)
	return ctx
}

// acquireAsync runs Acquire on its own goroutine; the channel gets its
// result.
func acquireAsync(ctx context.Context, k *rwlock.Lock) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- k.Acquire(ctx) }()
	return ch
}

// result waits for an acquireAsync result.
func result(t testing.TB, ch <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(waitTimeout):
		t.Fatalf("%s: no result within %v", what, waitTimeout)
		return nil
	}
}

// mustAcquired waits for an acquireAsync result and fails unless it is nil.
func mustAcquired(t testing.TB, ch <-chan error, what string) {
	t.Helper()
	if err := result(t, ch, what); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// pending fails if an acquireAsync has a result already.
func pending(t testing.TB, ch <-chan error, what string) {
	t.Helper()
	select {
	case err := <-ch:
		t.Fatalf("%s returned (%v) while it must wait", what, err)
	default:
	}
}

// eventually polls a server-side condition until it holds or waitTimeout
// passes.
func eventually(t testing.TB, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		ok, err := cond()
		if ok && err == nil {
			return
		}
		lastErr = err
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v (last error: %v)", what, waitTimeout, lastErr)
		}
		<-tick.C
	}
}

// children lists path's children (names), none when path is missing.
func children(t testing.TB, c *framework.Client, path string) []string {
	t.Helper()
	ch, _, err := c.Children(ctxFor(t), path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		t.Fatalf("children %s: %v", path, err)
	}
	return ch
}

// waitChildren waits until path has n children.
func waitChildren(t testing.TB, c *framework.Client, path string, n int) []string {
	t.Helper()
	var got []string
	eventually(t, fmt.Sprintf("%d children under %s", n, path), func() (bool, error) {
		got = children(t, c, path)
		return len(got) == n, nil
	})
	return got
}

// seqOf returns the sequence number at the end of a lock node path. It
// may be called from any goroutine: a bad name fails the test and gives 0.
func seqOf(t testing.TB, node string) int32 {
	t.Helper()
	i := strings.LastIndex(node, "_")
	n, err := strconv.ParseInt(node[i+1:], 10, 32)
	if err != nil {
		t.Errorf("node %q has no sequence number: %v", node, err)
	}
	return int32(n)
}

// watchers returns, for each watched path on the server (full paths, with
// namespace), the sessions watching it, from the wchp four-letter word.
func watchers(t testing.TB) (map[string][]int64, error) {
	t.Helper()
	out, err := server.FourLetterWord("wchp")
	if err != nil {
		return nil, err
	}
	w := map[string][]int64{}
	var cur string
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimRight(line, "\r")
		switch {
		case strings.HasPrefix(line, "/"):
			cur = line
			w[cur] = []int64{}
		case strings.HasPrefix(strings.TrimSpace(line), "0x") && cur != "":
			id, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(line), "0x"), 16, 64)
			if err != nil {
				return nil, fmt.Errorf("wchp line %q: %w", line, err)
			}
			w[cur] = append(w[cur], int64(id))
		}
	}
	return w, nil
}

// sameSessions reports whether got and want hold the same sessions.
func sameSessions(got []int64, want ...int64) bool {
	if len(got) != len(want) {
		return false
	}
	seen := map[int64]int{}
	for _, s := range got {
		seen[s]++
	}
	for _, s := range want {
		if seen[s] == 0 {
			return false
		}
		seen[s]--
	}
	return true
}
