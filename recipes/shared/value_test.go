package shared_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/shared"
	"github.com/gocurator/curator/zktest"
)

const valuePath = "/config/value"

// waitBytes waits until v's cached value is want, on Watch's channel.
func waitBytes(t testing.TB, v *shared.Value, want []byte) {
	t.Helper()
	timer := time.NewTimer(testkit.Deadline)
	defer timer.Stop()
	for {
		got, ch := v.Watch()
		if bytes.Equal(got.Value, want) {
			return
		}
		select {
		case <-ch:
		case <-timer.C:
			t.Fatalf("cached value is %q, never became %q", v.Cached(), want)
		}
	}
}

func TestValueSeedSetAndTrySet(t *testing.T) {
	t.Parallel()
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	ctx := testkit.Ctx(t)
	v := shared.NewValue(c, valuePath, []byte("seed"))
	if got := v.Versioned(); got.Version != -1 || string(got.Value) != "seed" {
		t.Fatalf("before any read: %+v, want the seed at version -1", got)
	}
	got, err := v.Get(ctx)
	if err != nil || string(got) != "seed" {
		t.Fatalf("Get of a missing node = %q, %v; want the seed", got, err)
	}
	if err := v.Set(ctx, []byte{0, 1, 2}); err != nil {
		t.Fatal(err)
	}
	prev, err := v.GetVersioned(ctx)
	if err != nil || !bytes.Equal(prev.Value, []byte{0, 1, 2}) {
		t.Fatalf("GetVersioned = %+v, %v", prev, err)
	}
	if ok, err := v.TrySet(ctx, prev, []byte("next")); !ok || err != nil {
		t.Fatalf("TrySet at the current version = %v, %v; want true", ok, err)
	}
	if ok, err := v.TrySet(ctx, prev, []byte("stale")); ok || err != nil {
		t.Fatalf("TrySet with a stale version = %v, %v; want false, nil", ok, err)
	}
	if ok, err := v.TrySet(ctx, shared.Versioned[[]byte]{Version: -1}, []byte("any")); ok || err != nil {
		t.Fatalf("TrySet at version -1 = %v, %v; want false: -1 must not mean any version", ok, err)
	}
	cur, err := v.GetVersioned(ctx)
	if err != nil || string(cur.Value) != "next" {
		t.Fatalf("GetVersioned = %+v, %v; want next", cur, err)
	}
	// Empty data is a value like any other.
	if ok, err := v.TrySet(ctx, cur, nil); !ok || err != nil {
		t.Fatalf("TrySet of no bytes = %v, %v", ok, err)
	}
	if got, err := v.Get(ctx); err != nil || len(got) != 0 {
		t.Fatalf("Get after writing no bytes = %q, %v", got, err)
	}
	cur, _ = v.GetVersioned(ctx)
	if err := c.Delete(ctx, valuePath); err != nil {
		t.Fatal(err)
	}
	if ok, err := v.TrySet(ctx, cur, []byte("gone")); ok || err != nil {
		t.Fatalf("TrySet on a deleted node = %v, %v; want false, nil", ok, err)
	}
	// Set makes the node again, with container parents.
	if err := shared.NewValue(c, "/a/b/value", nil).Set(ctx, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if got, err := shared.NewValue(c, "/a/b/value", []byte("ignored")).Get(ctx); err != nil || string(got) != "x" {
		t.Fatalf("Get after Set on a missing node = %q, %v", got, err)
	}
}

// Slices given to and taken from a Value are copies: changing them changes
// neither the cache nor what another caller sees.
func TestValueBytesAreCopies(t *testing.T) {
	t.Parallel()
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	ctx := testkit.Ctx(t)
	v := shared.NewValue(c, valuePath, nil)
	in := []byte("abc")
	if err := v.Set(ctx, in); err != nil {
		t.Fatal(err)
	}
	in[0] = 'X'
	out := v.Cached()
	out[1] = 'Y'
	if got := v.Cached(); string(got) != "abc" {
		t.Fatalf("cached %q after the caller changed its slices, want abc", got)
	}
}

func TestValueBadInput(t *testing.T) {
	t.Parallel()
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	ctx := testkit.Ctx(t)
	tests := []struct {
		name string
		v    *shared.Value
		want error
	}{
		{"nil client", shared.NewValue(nil, valuePath, nil), shared.ErrNilClient},
		{"relative path", shared.NewValue(c, "config", nil), shared.ErrInvalidPath},
		{"root", shared.NewValue(c, "/", nil), shared.ErrInvalidPath},
		{"nil handle", nil, shared.ErrNilHandle},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.v.Start(ctx); !errors.Is(err, tt.want) {
				t.Errorf("Start = %v, want %v", err, tt.want)
			}
			if _, err := tt.v.Get(ctx); !errors.Is(err, tt.want) {
				t.Errorf("Get = %v, want %v", err, tt.want)
			}
			if err := tt.v.Set(ctx, nil); !errors.Is(err, tt.want) {
				t.Errorf("Set = %v, want %v", err, tt.want)
			}
			if ok, err := tt.v.TrySet(ctx, shared.Versioned[[]byte]{}, nil); ok || !errors.Is(err, tt.want) {
				t.Errorf("TrySet = %v, %v, want false, %v", ok, err, tt.want)
			}
			if err := tt.v.Close(); err != nil {
				t.Errorf("Close = %v", err)
			}
		})
	}
}

// A started Value follows writes of another client, in order, and tells
// its listeners; Close stops the watch on the server.
func TestValueListenFollowsWrites(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	rc := testkit.Connect(t, zkAddr, ns)
	reader := shared.NewValue(rc, valuePath, []byte("0"))
	if err := reader.Start(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.AwaitWatch(t, zkAddr, rc, valuePath)
	const last = 20
	seen := make(chan []byte, 2*last)
	cancel := reader.Listen(func(b []byte) { seen <- b })
	defer cancel()
	writer := shared.NewValue(testkit.Connect(t, zkAddr, ns), valuePath, nil)
	for i := 1; i <= last; i++ {
		if err := writer.Set(ctx, []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	prev := 0
	timer := time.NewTimer(testkit.Deadline)
	defer timer.Stop()
	for prev != last {
		select {
		case b := <-seen:
			if len(b) != 1 || int(b[0]) <= prev {
				t.Fatalf("listener saw %v after %d", b, prev)
			}
			prev = int(b[0])
		case <-timer.C:
			t.Fatalf("listener stopped at %d, want %d", prev, last)
		}
	}
	waitBytes(t, reader, []byte{last})
	if err := reader.Close(); err != nil {
		t.Fatal(err)
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, rc)
}

// A cut shorter than the session: a write made while the client was away
// reaches the cache after the reconnection.
func TestValueCatchesUpAfterCut(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	proxy := zktest.NewProxy(t, zkAddr)
	cut := testkit.Connect(t, proxy.Addr(), ns)
	v := shared.NewValue(cut, valuePath, []byte("before"))
	defer v.Close()
	if err := v.Start(ctx); err != nil {
		t.Fatal(err)
	}
	writer := shared.NewValue(testkit.Connect(t, zkAddr, ns), valuePath, nil)
	proxy.Cut()
	testkit.WaitState(t, cut, connstate.Suspended)
	if err := writer.Set(ctx, []byte("while away")); err != nil {
		t.Fatal(err)
	}
	proxy.Restore()
	waitBytes(t, v, []byte("while away"))
}

// A Count is a Value of 4 bytes: the two read one node alike, and a Count
// ignores data that is not a count where a Value takes any bytes.
func TestCountIsAValueOfFourBytes(t *testing.T) {
	t.Parallel()
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	ctx := testkit.Ctx(t)
	n := shared.NewCount(c, countPath, 0)
	defer n.Close()
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	v := shared.NewValue(c, countPath, nil)
	defer v.Close()
	if err := v.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := n.Set(ctx, 258); err != nil {
		t.Fatal(err)
	}
	waitBytes(t, v, []byte{0, 0, 1, 2})
	if err := v.Set(ctx, []byte("no")); err != nil {
		t.Fatal(err)
	}
	waitBytes(t, v, []byte("no"))
	if _, err := n.Get(ctx); !errors.Is(err, shared.ErrMalformed) {
		t.Fatalf("Count.Get of 2 bytes = %v, want ErrMalformed", err)
	}
	if err := v.Set(ctx, []byte{0, 0, 0, 9}); err != nil {
		t.Fatal(err)
	}
	waitValue(t, n, 9)
}
