package barrier_test

import (
	"testing"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/barrier"
	"github.com/gocurator/curator/zktest"
)

// lowHigh returns two members of a barrier of 2 whose nodes sort low then
// high, high on highClient: names are chosen at NewDouble, so draw until
// they sort that way.
func lowHigh(t *testing.T, lowClient, highClient *framework.Client) (low, high *barrier.Double) {
	t.Helper()
	high = barrier.NewDouble(highClient, barrierPath, 2)
	for {
		low = barrier.NewDouble(lowClient, barrierPath, 2)
		if barrier.Node(low) < barrier.Node(high) {
			return low, high
		}
	}
}

// enterBoth enters both members of a barrier of 2.
func enterBoth(t *testing.T, a, b *barrier.Double) {
	t.Helper()
	ctx := testkit.Ctx(t)
	ea, eb := async(func() error { return a.Enter(ctx) }), async(func() error { return b.Enter(ctx) })
	for _, ch := range []<-chan error{ea, eb} {
		if err := await(t, ch, "Enter"); err != nil {
			t.Fatal(err)
		}
	}
}

// awaitWokenAndWaiting waits until d's wait woke (its wake-up count passed
// before) and then either Leave returned (a failure: the lowest member,
// whose node is at lowNode, never left) or d is waiting again on lowNode.
func awaitWokenAndWaiting(t *testing.T, c *framework.Client, d *barrier.Double, before int64, lowNode string, left <-chan error) {
	t.Helper()
	testkit.Eventually(t, "the leaving member woke", func() bool { return barrier.Wakeups(d) > before })
	var returned bool
	var err error
	testkit.Eventually(t, "Leave returned, or waits again for the lowest", func() bool {
		select {
		case err = <-left:
			returned = true
			return true
		default:
		}
		for _, w := range testkit.SessionWatches(t, zkAddr, c.SessionID()) {
			if w == testkit.FullPath(c, lowNode) {
				return true
			}
		}
		return false
	})
	if returned {
		t.Fatalf("Leave returned %v after a wake-up while the lowest member had not left", err)
	}
}

// Issue 33 item 3 (GH-1290's pattern in Leave, pitfall 26): a member that
// does not sort first deletes its node and waits for the lowest; a
// reconnection wakes it, and it must look again and go on waiting, not
// return while the lowest member, which never called Leave, is still in.
func TestLeaveReconnectIsNotTheLowestLeaving(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	hc := testkit.Connect(t, proxy.Addr(), ns)
	lc := testkit.Connect(t, zkAddr, ns)
	obs := testkit.Connect(t, zkAddr, ns)
	low, high := lowHigh(t, lc, hc)
	enterBoth(t, low, high)

	before := barrier.Wakeups(high)
	left := async(func() error { return high.Leave(ctx) })
	testkit.AwaitWatch(t, zkAddr, hc, barrier.Node(low))
	proxy.Cut()
	testkit.WaitState(t, hc, connstate.Suspended)
	proxy.Restore()
	testkit.WaitState(t, hc, connstate.Reconnected)
	awaitWokenAndWaiting(t, hc, high, before, barrier.Node(low), left)

	// The lowest leaves: both return and nothing is left.
	if err := low.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	if err := await(t, left, "Leave"); err != nil {
		t.Fatal(err)
	}
	if kids := testkit.Children(t, obs, barrierPath); len(kids) != 0 {
		t.Fatalf("left behind: %v", kids)
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, hc, lc)
}
