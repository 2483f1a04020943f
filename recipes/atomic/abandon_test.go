package atomic_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/atomic"
	"github.com/gocurator/curator/zktest"
)

// Pitfall 25: an Add whose ctx ends at any point (before its write is
// sent, while it is in flight on a slow link) either reports success or
// was not applied (or says ErrUnknownOutcome): once every request sent
// before a later one has been answered, the counter holds exactly the Adds
// that succeeded. The writer child goes with Close.
func TestCancelledAddIsKnown(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns)
	obs := testkit.Connect(t, zkAddr, ns)
	l := atomic.NewLong(c, "/counter")
	proxy.SetDelay(30 * time.Millisecond)
	var ok, failed int64
	for i := 0; i < 16; i++ {
		ctx, cancel := context.WithCancel(testkit.Ctx(t))
		stop := time.AfterFunc(time.Duration(i)*15*time.Millisecond, cancel)
		_, err := l.Add(ctx, 1)
		stop.Stop()
		cancel()
		switch {
		case err == nil:
			ok++
		case errors.Is(err, atomic.ErrUnknownOutcome):
			t.Fatalf("try %d: %v (no session was lost)", i, err)
		case errors.Is(err, context.Canceled):
			failed++
		default:
			t.Fatalf("try %d: %v", i, err)
		}
	}
	proxy.SetDelay(0)
	if _, err := c.Exists(testkit.Ctx(t), "/counter"); err != nil { // after all sent before
		t.Fatal(err)
	}
	v, err := atomic.NewLong(obs, "/counter").Get(testkit.Ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if v != ok {
		t.Fatalf("counter = %d after %d Adds that succeeded and %d cancelled", v, ok, failed)
	}
	if err := l.Close(testkit.Ctx(t)); err != nil {
		t.Fatal(err)
	}
	if kids := testkit.Children(t, obs, "/counter"); len(kids) != 0 {
		t.Fatalf("left behind: %v", kids)
	}
}
