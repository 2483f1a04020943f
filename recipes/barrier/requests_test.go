package barrier_test

import (
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
)

// received returns how many requests the server has read from the
// sessions of cs, summed (testkit.Received).
func received(t *testing.T, cs []*framework.Client) int {
	sids := make([]int64, len(cs))
	for i, c := range cs {
		sids[i] = c.SessionID()
	}
	return testkit.Received(t, zkAddr, sids...)
}

// The requests a round of 4 members sends to enter and to leave the double
// barrier, all entering at once and then all leaving at once, counted by
// the server: the least of several rounds, so that keepalive pings cannot
// decide it. Curator 5.4 takes about 37.5 a round. Ours took 30 to enter
// and 61 to leave while every look read the barrier node's data, its
// listing and the ready node one after another, then 16 and 45 with a
// look's reads side by side and every Leave look reading each member's
// Stat. Now (docs/barrier.md, "Requests and round trips") a member's
// Enter is its create, the ready watch beside it, a listing, and then
// either the commit (and, refused because another member made ready
// first, one read of ready) or a wait and a look of two reads: 19, the
// watch on ready being the price of waiting after one round trip. Leave
// reads no member's Stat that Enter's listings placed: a listing a look,
// a delete and a watch a member, and the last member's transaction: 16.
// The bounds leave one or two requests a round for timing (a listing taken
// after the opening makes its new names read once); a request added back
// to every member's Enter or Leave fails the test.
func TestRequestCount(t *testing.T) {
	t.Parallel()
	const members, rounds = 4, 5
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	leastEnter, leastLeave := 1<<30, 1<<30
	for range rounds {
		ds, cs := doublesAndClients(t, ns, members, members)
		before := received(t, cs)
		var entered []<-chan error
		for _, d := range ds {
			entered = append(entered, async(func() error { return d.Enter(ctx) }))
		}
		for i, ch := range entered {
			if err := await(t, ch, "Enter"); err != nil {
				t.Fatalf("member %d: %v", i, err)
			}
		}
		mid := received(t, cs)
		var left []<-chan error
		for _, d := range ds {
			left = append(left, async(func() error { return d.Leave(ctx) }))
		}
		for i, ch := range left {
			if err := await(t, ch, "Leave"); err != nil {
				t.Fatalf("member %d: %v", i, err)
			}
		}
		leastEnter = min(leastEnter, mid-before)
		leastLeave = min(leastLeave, received(t, cs)-mid)
	}
	t.Logf("a round of %d members: Enter %d requests, Leave %d (least of %d rounds)", members, leastEnter, leastLeave, rounds)
	if leastEnter > maxEnterRequests || leastLeave > maxLeaveRequests {
		t.Fatalf("a round of %d members took %d requests to enter and %d to leave; want at most %d and %d",
			members, leastEnter, leastLeave, maxEnterRequests, maxLeaveRequests)
	}
}

const maxEnterRequests, maxLeaveRequests = 20, 18
