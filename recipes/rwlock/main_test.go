package rwlock_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/rwlock"
)

// zkAddr is the package's ZooKeeper server, started by TestMain for every
// test, benchmark and example (the examples read it from $GOCURATOR_ZK, as
// a program would). Every test works in a namespace of its own.
var zkAddr string

func TestMain(m *testing.M) { testkit.Main(m, &zkAddr) }

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
	case <-time.After(testkit.Deadline):
		t.Fatalf("%s: no result within %v", what, testkit.Deadline)
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

// waitChildren waits until path has n children.
func waitChildren(t testing.TB, c *framework.Client, path string, n int) []string {
	t.Helper()
	var got []string
	testkit.Eventually(t, fmt.Sprintf("%d children under %s", n, path), func() bool {
		got = testkit.Children(t, c, path)
		return len(got) == n
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
// Paths carry the test's namespace, so tests sharing the server do not
// disturb each other's entries.
func watchers(t testing.TB) map[string][]int64 {
	t.Helper()
	out, err := testkit.FourLetterWord(zkAddr, "wchp")
	if err != nil {
		t.Fatal(err)
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
				t.Fatalf("wchp line %q: %v", line, err)
			}
			w[cur] = append(w[cur], int64(id))
		}
	}
	return w
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
