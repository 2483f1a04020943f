package atomic_test

import (
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/atomic"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/zktest"
)

// Pitfall 26 on the promoted lock: an update promoted to the lock waits
// for its holder; a reconnection, or a new session after the old one
// expired, wakes the wait, and the promoted try must still not run while
// the holder (another client, whose hold the server keeps across the
// window) holds the lock. Once it releases, the update either succeeds
// under the lock or reports an error; it never writes without the lock.
func TestPromotedWaitWakeUpIsNotTheLock(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		opts    []framework.Option
		newSess bool
	}{
		{"reconnect", nil, false},
		{"new session", []framework.Option{framework.WithSessionTimeout(3 * time.Second)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := testkit.Ctx(t)
			ns := testkit.Unique(t)
			proxy := zktest.NewProxy(t, zkAddr)
			c := testkit.Connect(t, proxy.Addr(), ns, tc.opts...)
			hc := testkit.Connect(t, zkAddr, ns)
			other := atomic.NewLong(testkit.Connect(t, zkAddr, ns), "/counter")
			defer func() { _ = other.Close(ctx) }()
			holder := mutex.New(hc, "/lock")
			if err := holder.Acquire(ctx); err != nil {
				t.Fatal(err)
			}
			held := true
			var ranWhileHeld bool
			inLock := make(chan struct{}, 1)
			l := atomic.NewLong(c, "/counter", atomic.PromotedToLock("/lock"), atomic.WithRetryPolicy(retry.NTimes(0, 0)))
			defer func() { _ = l.Close(ctx) }()
			heldNow := make(chan bool, 1)
			heldNow <- true
			atomic.SetBeforeWrite(l, func(promoted bool) {
				if !promoted {
					if _, err := other.Add(ctx, 100); err != nil { // every optimistic try conflicts
						t.Error(err)
					}
					return
				}
				h := <-heldNow
				heldNow <- h
				if h {
					ranWhileHeld = true
				}
				select {
				case inLock <- struct{}{}:
				default:
				}
			})
			type result struct {
				r   atomic.Result[int64]
				err error
			}
			done := make(chan result, 1)
			go func() {
				r, err := l.Increment(ctx)
				done <- result{r, err}
			}()
			testkit.Eventually(t, "the update queued on the lock", func() bool {
				ps, err := holder.Participants(ctx)
				return err == nil && len(ps) == 2
			})
			old := c.SessionID()
			if tc.newSess {
				proxy.BlackHole()
				testkit.WaitState(t, c, connstate.Lost)
			} else {
				proxy.Cut()
				testkit.WaitState(t, c, connstate.Suspended)
			}
			proxy.Restore()
			testkit.Eventually(t, "reconnected", func() bool {
				return c.State() == connstate.Reconnected && (!tc.newSess || c.SessionID() != old)
			})
			// The holder still holds, by the server's word.
			if !holder.IsHeld() {
				t.Fatal("the holder lost the lock")
			}
			var early *result
			testkit.Eventually(t, "the update waiting again or ended", func() bool {
				select {
				case r := <-done:
					early = &r
					return true
				default:
				}
				ps, err := holder.Participants(ctx)
				return err == nil && len(ps) == 2
			})
			<-heldNow
			heldNow <- false
			held = false
			if err := holder.Release(ctx); err != nil {
				t.Fatal(err)
			}
			var r result
			if early != nil {
				r = *early
			} else {
				select {
				case r = <-done:
				case <-time.After(testkit.Deadline):
					t.Fatal("the update never ended")
				}
			}
			t.Logf("Increment = %+v, %v (ended early: %v)", r.r, r.err, early != nil)
			if ranWhileHeld {
				t.Fatalf("a promoted try ran while another client held the lock (held %v)", held)
			}
			if r.err == nil && (!r.r.Succeeded || r.r.Stats.PromotedTries < 1 || r.r.Stats.PromotedTime <= 0) {
				t.Fatalf("Increment = %+v without an error", r.r)
			}
			testkit.Eventually(t, "the lock path emptied", func() bool { return len(testkit.Children(t, hc, "/lock")) == 0 })
		})
	}
}
