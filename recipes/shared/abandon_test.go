package shared_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/shared"
	"github.com/gocurator/curator/zktest"
)

// Pitfall 25: a Set whose ctx ends at any point (before it is sent, in
// flight on a slow link) is never applied after the caller moved on: the
// Set that follows it on the same handle is the value that stays, once
// every request sent before a later one has been answered. A TrySet
// likewise: one that said false (or failed) changed nothing.
func TestCancelledSetIsNotAppliedLater(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns)
	obs := testkit.Connect(t, zkAddr, ns)
	v := shared.NewValue(c, "/value", []byte("seed"))
	if _, err := v.Get(testkit.Ctx(t)); err != nil {
		t.Fatal(err)
	}
	proxy.SetDelay(30 * time.Millisecond)
	for i := 0; i < 16; i++ {
		ctx, cancel := context.WithCancel(testkit.Ctx(t))
		stop := time.AfterFunc(time.Duration(i)*8*time.Millisecond, cancel)
		err := v.Set(ctx, []byte(fmt.Sprint("cancelled ", i)))
		stop.Stop()
		cancel()
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("try %d: %v", i, err)
		}
		want := []byte(fmt.Sprint("after ", i))
		if err := v.Set(testkit.Ctx(t), want); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Exists(testkit.Ctx(t), "/value"); err != nil { // after all sent before
			t.Fatal(err)
		}
		got, _, err := obs.Get(testkit.Ctx(t), "/value")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("try %d: the value is %q after Set(%q): a cancelled Set landed later", i, got, want)
		}
	}
}
