package shared_test

import (
	"bytes"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/shared"
	"github.com/gocurator/curator/zktest"
)

const countPath = "/counts/max"

// waitValue waits until n's cached value is want, on Watch's channel.
func waitValue(t testing.TB, n *shared.Count, want int) {
	t.Helper()
	timer := time.NewTimer(testkit.Deadline)
	defer timer.Stop()
	for {
		v, ch := n.Watch()
		if v.Value == want {
			return
		}
		select {
		case <-ch:
		case <-timer.C:
			t.Fatalf("cached count is %d, never became %d", n.Value(), want)
		}
	}
}

// waitGone waits, on a watch, until path does not exist.
func waitGone(t testing.TB, c *framework.Client, path string) {
	t.Helper()
	ctx := testkit.Ctx(t)
	for {
		_, _, ch, err := c.GetW(ctx, path)
		if errors.Is(err, zk.ErrNoNode) {
			return
		}
		if err != nil {
			t.Fatalf("waiting until %s is gone: %v", path, err)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("%s never went", path)
		}
	}
}

func TestStartCreatesNodeWithSeed(t *testing.T) {
	t.Parallel()
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	ctx := testkit.Ctx(t)
	n := shared.NewCount(c, countPath, 7)
	defer n.Close()
	if v := n.Versioned(); v.Value != 7 || v.Version != -1 {
		t.Fatalf("before Start: %+v, want the seed at version -1", v)
	}
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := n.Start(ctx); err != nil {
		t.Fatalf("second Start: %v", err)
	}
	data, stat, err := c.Get(ctx, countPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, []byte{0, 0, 0, 7}) || stat.EphemeralOwner != 0 {
		t.Fatalf("node data %x owner %x, want 00000007 persistent", data, stat.EphemeralOwner)
	}
	if v := n.Versioned(); v.Value != 7 || v.Version != 0 {
		t.Fatalf("after Start: %+v, want 7 at version 0", v)
	}
	// A second count with another seed finds the node and keeps its value.
	other := shared.NewCount(c, countPath, 99)
	defer other.Close()
	if err := other.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if got := other.Value(); got != 7 {
		t.Fatalf("existing node read as %d, want 7", got)
	}
}

func TestLazyCreateOnFirstUse(t *testing.T) {
	t.Parallel()
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	ctx := testkit.Ctx(t)
	if got, err := shared.NewCount(c, "/a/b/get", -3).Get(ctx); err != nil || got != -3 {
		t.Fatalf("Get on a missing node = %d, %v; want the seed -3", got, err)
	}
	if err := shared.NewCount(c, "/a/b/set", 1).Set(ctx, 12); err != nil {
		t.Fatal(err)
	}
	if got, err := shared.NewCount(c, "/a/b/set", 1).Get(ctx); err != nil || got != 12 {
		t.Fatalf("after Set on a missing node: %d, %v", got, err)
	}
}

func TestSetAndTrySet(t *testing.T) {
	t.Parallel()
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	ctx := testkit.Ctx(t)
	n := shared.NewCount(c, countPath, 0)
	if err := n.Set(ctx, 5); err != nil {
		t.Fatal(err)
	}
	prev, err := n.GetVersioned(ctx)
	if err != nil || prev.Value != 5 {
		t.Fatalf("GetVersioned = %+v, %v", prev, err)
	}
	if ok, err := n.TrySet(ctx, prev, 6); !ok || err != nil {
		t.Fatalf("TrySet at the current version = %v, %v; want true", ok, err)
	}
	if ok, err := n.TrySet(ctx, prev, 7); ok || err != nil {
		t.Fatalf("TrySet with a stale version = %v, %v; want false, nil", ok, err)
	}
	if got, err := n.Get(ctx); err != nil || got != 6 {
		t.Fatalf("count %d, %v after a refused TrySet, want 6", got, err)
	}
	if ok, err := n.TrySet(ctx, shared.VersionedValue{Version: -1, Value: 6}, 8); ok || err != nil {
		t.Fatalf("TrySet with version -1 (never read) = %v, %v; want false: -1 must not mean any version", ok, err)
	}
	cur, err := n.GetVersioned(ctx)
	if err != nil || cur.Value != 6 {
		t.Fatalf("GetVersioned = %+v, %v; want 6", cur, err)
	}
	if err := c.Delete(ctx, countPath); err != nil {
		t.Fatal(err)
	}
	if ok, err := n.TrySet(ctx, cur, 9); ok || err != nil {
		t.Fatalf("TrySet on a deleted node = %v, %v; want false, nil", ok, err)
	}
	if v := n.Versioned(); v.Value != 6 {
		t.Fatalf("cached %+v, want 6", v)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	ctx := testkit.Ctx(t)
	tests := []struct {
		name string
		n    *shared.Count
		want error
	}{
		{"nil client", shared.NewCount(nil, countPath, 1), shared.ErrNilClient},
		{"relative path", shared.NewCount(c, "counts", 1), shared.ErrInvalidPath},
		{"trailing slash", shared.NewCount(c, "/counts/", 1), shared.ErrInvalidPath},
		{"root", shared.NewCount(c, "/", 1), shared.ErrInvalidPath},
		{"seed above int32", shared.NewCount(c, countPath, math.MaxInt32+1), shared.ErrOutOfRange},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.n.Start(ctx); !errors.Is(err, tt.want) {
				t.Errorf("Start = %v, want %v", err, tt.want)
			}
			if _, err := tt.n.Get(ctx); !errors.Is(err, tt.want) {
				t.Errorf("Get = %v, want %v", err, tt.want)
			}
			if err := tt.n.Set(ctx, 1); !errors.Is(err, tt.want) {
				t.Errorf("Set = %v, want %v", err, tt.want)
			}
			if ok, err := tt.n.TrySet(ctx, shared.VersionedValue{}, 1); ok || !errors.Is(err, tt.want) {
				t.Errorf("TrySet = %v, %v, want false, %v", ok, err, tt.want)
			}
			if err := tt.n.Close(); err != nil {
				t.Errorf("Close = %v", err)
			}
		})
	}
	n := shared.NewCount(c, countPath, 1)
	if err := n.Set(ctx, math.MinInt32-1); !errors.Is(err, shared.ErrOutOfRange) {
		t.Fatalf("Set below int32 = %v", err)
	}
	if ok, err := n.TrySet(ctx, shared.VersionedValue{}, math.MaxInt32+1); ok || !errors.Is(err, shared.ErrOutOfRange) {
		t.Fatalf("TrySet above int32 = %v, %v", ok, err)
	}
	if _, err := c.Create(ctx, "/notacount", []byte{1, 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := shared.NewCount(c, "/notacount", 1).Get(ctx); !errors.Is(err, shared.ErrMalformed) {
		t.Fatalf("Get of 2-byte data = %v, want ErrMalformed", err)
	}
}

func TestCloseStopsAndStartAfterCloseFails(t *testing.T) {
	t.Parallel()
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	ctx := testkit.Ctx(t)
	n := shared.NewCount(c, countPath, 1)
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	got := make(chan int, 1)
	n.Listen(func(v int) { got <- v })
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := n.Start(ctx); !errors.Is(err, shared.ErrClosed) {
		t.Fatalf("Start after Close = %v, want ErrClosed", err)
	}
	// Reads and writes still work; a closed count just stops watching.
	if err := n.Set(ctx, 2); err != nil {
		t.Fatal(err)
	}
	select {
	case v := <-got:
		t.Fatalf("listener called with %d after Close", v)
	default:
	}
}

// Values written one after another reach a listener of another client in
// order, ending with the last one.
func TestListenReportsChangesInOrder(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	reader := shared.NewCount(testkit.Connect(t, zkAddr, ns), countPath, 0)
	defer reader.Close()
	if err := reader.Start(ctx); err != nil {
		t.Fatal(err)
	}
	const last = 30
	seen := make(chan int, 2*last)
	cancel := reader.Listen(func(v int) { seen <- v })
	defer cancel()
	writer := shared.NewCount(testkit.Connect(t, zkAddr, ns), countPath, 0)
	for v := 1; v <= last; v++ {
		if err := writer.Set(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	prev := 0
	timer := time.NewTimer(testkit.Deadline)
	defer timer.Stop()
	for prev != last {
		select {
		case v := <-seen:
			if v <= prev {
				t.Fatalf("listener saw %d after %d", v, prev)
			}
			prev = v
		case <-timer.C:
			t.Fatalf("listener stopped at %d, want %d", prev, last)
		}
	}
	if got := reader.Value(); got != last {
		t.Fatalf("cached %d, want %d", got, last)
	}
}

// The cache follows a node deleted and made again, whose version starts
// over at 0 (ordering by czxid first).
func TestFollowsRecreatedNode(t *testing.T) {
	t.Parallel()
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	ctx := testkit.Ctx(t)
	n := shared.NewCount(c, countPath, 0)
	defer n.Close()
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for v := 1; v <= 3; v++ { // version 3
		if _, err := c.Set(ctx, countPath, []byte{0, 0, 0, byte(v)}, -1); err != nil {
			t.Fatal(err)
		}
	}
	waitValue(t, n, 3)
	if err := c.Delete(ctx, countPath); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, countPath, []byte{0, 0, 0, 42}); err != nil {
		t.Fatal(err)
	}
	waitValue(t, n, 42)
	if v := n.Versioned(); v.Version != 0 {
		t.Fatalf("recreated node: %+v, want version 0", v)
	}
}

// A partition past the session timeout: the watch is gone with the
// session, yet the cache catches up with what was written meanwhile.
func TestWatchCatchesUpAfterSessionLoss(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	proxy := zktest.NewProxy(t, zkAddr)
	cut := testkit.Connect(t, proxy.Addr(), ns, framework.WithSessionTimeout(time.Second))
	n := shared.NewCount(cut, countPath, 1)
	defer n.Close()
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	seen := make(chan int, 8)
	defer n.Listen(func(v int) { seen <- v })()

	// alive goes when the server expires the session.
	if _, err := cut.Create(ctx, "/alive", []byte{}, framework.WithMode(framework.Ephemeral)); err != nil {
		t.Fatal(err)
	}
	other := testkit.Connect(t, zkAddr, ns)
	proxy.Cut()
	if err := shared.NewCount(other, countPath, 1).Set(ctx, 77); err != nil {
		t.Fatal(err)
	}
	testkit.WaitState(t, cut, connstate.Lost)
	// Restore only once the server expired the session too, so that the old
	// connection cannot come back to it with its watch: go-zookeeper v1.0.4
	// races on Conn.lastZxid when it does.
	waitGone(t, other, "/alive")
	proxy.Restore()
	waitValue(t, n, 77)
	select {
	case v := <-seen:
		if v != 77 {
			t.Fatalf("listener saw %d, want 77", v)
		}
	case <-time.After(testkit.Deadline):
		t.Fatal("listener not called after the session loss")
	}
}

// Watch's value and channel are taken together: a change after Watch
// always closes the channel it returned.
func TestWatchChannelClosesOnChange(t *testing.T) {
	t.Parallel()
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	ctx := testkit.Ctx(t)
	n := shared.NewCount(c, countPath, 1)
	defer n.Close()
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	v, ch := n.Watch()
	if v.Value != 1 {
		t.Fatalf("Watch value %d", v.Value)
	}
	if _, err := c.Set(ctx, countPath, []byte{0, 0, 0, 2}, -1); err != nil {
		t.Fatal(err)
	}
	testkit.WaitClosed(t, ch, "the Watch channel after a write")
	if got := n.Value(); got != 2 {
		t.Fatalf("value %d after the channel closed, want 2", got)
	}
	// Malformed data written by someone else is ignored, not cached.
	if _, err := c.Set(ctx, countPath, []byte("x"), -1); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Set(ctx, countPath, []byte{0, 0, 0, 3}, -1); err != nil {
		t.Fatal(err)
	}
	waitValue(t, n, 3)
}

// Close called from a listener (the class of the client's Close deadlock):
// the listener's own goroutine must not be waited for.
func TestCloseFromListener(t *testing.T) {
	t.Parallel()
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	ctx := testkit.Ctx(t)
	n := shared.NewCount(c, countPath, 1)
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	n.Listen(func(int) { closed <- n.Close() })
	if err := n.Set(ctx, 2); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(testkit.Deadline):
		t.Fatal("Close from a listener did not return")
	}
	if err := n.Close(); err != nil {
		t.Fatalf("later Close: %v", err)
	}
}

// A connection cut shorter than the session: a write made while the
// client was away reaches the cache after the reconnection (the watch's
// WatchResync makes it read again), and so does the next one.
func TestWatchCatchesUpAfterCut(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	proxy := zktest.NewProxy(t, zkAddr)
	cut := testkit.Connect(t, proxy.Addr(), ns)
	n := shared.NewCount(cut, countPath, 1)
	defer n.Close()
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	writer := shared.NewCount(testkit.Connect(t, zkAddr, ns), countPath, 1)
	proxy.Cut()
	testkit.WaitState(t, cut, connstate.Suspended)
	if err := writer.Set(ctx, 55); err != nil {
		t.Fatal(err)
	}
	if got := n.Value(); got != 1 {
		t.Fatalf("cached %d while cut off, want 1", got)
	}
	proxy.Restore()
	waitValue(t, n, 55)
	if err := writer.Set(ctx, 56); err != nil {
		t.Fatal(err)
	}
	waitValue(t, n, 56)
}

// A started count costs one server watch, which Close takes off the server
// (the one-shot data watch it used before stayed until the node changed).
func TestCloseLeavesNoServerWatch(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	n := shared.NewCount(c, countPath, 1)
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.AwaitWatch(t, zkAddr, c, countPath)
	t.Logf("server watches of a started count: %v", testkit.SessionWatches(t, zkAddr, c.SessionID()))
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, c)
}
