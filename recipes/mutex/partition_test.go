package mutex_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/zktest"
)

// A holder partitioned silently (packets dropped, no reset) under
// SessionPolicy must stop holding before the server can expire its session
// and give the lock to someone else. go-zookeeper notices the silence only
// after two thirds of the session timeout; counting the client-side expiry
// from then let the server hand the lock over ~2 s before the holder's Done
// closed (two holders). The evidence is taken on the server when Done
// closes: the holder's node must still be there, so nobody else can hold.
func TestSilentPartitionEndsHoldBeforeServerExpiry(t *testing.T) {
	for _, policy := range []struct {
		name string
		p    connstate.ErrorPolicy
	}{
		{"session policy", connstate.SessionPolicy{}},
		{"standard policy", connstate.StandardPolicy{}},
	} {
		t.Run(policy.name, func(t *testing.T) {

			ns := testkit.Unique(t)
			proxy := zktest.NewProxy(t, zkAddr)
			const session = 3 * time.Second
			holderClient := testkit.Connect(t, proxy.Addr(), ns,
				framework.WithSessionTimeout(session), framework.WithErrorPolicy(policy.p))
			other := testkit.Connect(t, zkAddr, ns)
			ctx := testkit.Ctx(t)

			holder := mutex.New(holderClient, "/lock")
			if err := holder.Acquire(ctx); err != nil {
				t.Fatal(err)
			}
			node := holder.Node()
			waiter := mutex.New(other, "/lock")
			acquired := make(chan time.Time, 1)
			go func() {
				if err := waiter.Acquire(ctx); err != nil {
					t.Errorf("waiter: %v", err)
					close(acquired)
					return
				}
				acquired <- time.Now()
			}()
			testkit.Eventually(t, "waiter queued", func() bool { return len(testkit.Children(t, other, "/lock")) == 2 })

			start := time.Now()
			proxy.BlackHole()
			testkit.WaitClosed(t, holder.Done(), "holder's Done")
			doneAt := time.Since(start)
			// Server-side evidence, taken right after Done closed: the
			// session is still alive, so the lock is still ours alone.
			st, err := other.Exists(ctx, node)
			if err != nil {
				t.Fatal(err)
			}
			if st == nil {
				t.Fatalf("the server had expired the holder's session when Done closed (%v after the partition): two holders", doneAt)
			}
			if holder.IsHeld() {
				t.Fatal("IsHeld after Done closed")
			}
			if err := holder.Err(); !errors.Is(err, mutex.ErrLockLost) {
				t.Fatalf("Err = %v, want ErrLockLost", err)
			}
			// The waiter holds only once the server expired the holder's
			// session, which the check above shows had not happened when
			// Done closed: no timing is compared, the server's word is
			// the evidence.
			var at time.Time
			select {
			case at = <-acquired:
			case <-time.After(testkit.Deadline):
				t.Fatal("waiter never acquired")
			}
			t.Logf("partition of a %v session: holder's Done closed after %v, the server gave the lock away after %v",
				session, doneAt, at.Sub(start))
			if err := waiter.Release(ctx); err != nil {
				t.Fatal(err)
			}
			proxy.Restore()
		})
	}
}
