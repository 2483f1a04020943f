package barrier_test

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
)

var consLine = regexp.MustCompile(`recved=(\d+),sent=\d+,sid=0x([0-9a-f]+)`)

// received returns how many requests the server has read from each of the
// sessions of cs (the four-letter word cons), summed. Pings count too: a
// caller takes the least of several rounds (a ping only ever adds).
func received(t *testing.T, cs []*framework.Client) int {
	t.Helper()
	out, err := testkit.FourLetterWord(zkAddr, "cons")
	if err != nil {
		t.Fatal(err)
	}
	by := map[int64]int{}
	for _, m := range consLine.FindAllStringSubmatch(out, -1) {
		id, _ := strconv.ParseUint(m[2], 16, 64)
		n, _ := strconv.Atoi(m[1])
		by[int64(id)] = n
	}
	sum := 0
	for _, c := range cs {
		n, ok := by[c.SessionID()]
		if !ok {
			t.Fatalf("session %#x not in cons: %s", c.SessionID(), out)
		}
		sum += n
	}
	return sum
}

// The requests a round of 4 members sends to leave the double barrier,
// counted by the server (issue 35: 74 requests a round of Enter and Leave
// against Curator's 37.5). Leave reads the children alone, each member's
// place in the round is read once per member name, and the ready node only
// by the member that closes the round: 46 requests for 4 members, where
// there were 62. The least of several rounds is
// taken, so that keepalive pings cannot decide it.
func TestLeaveRequestCount(t *testing.T) {
	t.Parallel()
	const members, rounds = 4, 5
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	least := 1 << 30
	for range rounds {
		ds, cs := doublesAndClients(t, ns, members, members)
		var entered []<-chan error
		for _, d := range ds {
			entered = append(entered, async(func() error { return d.Enter(ctx) }))
		}
		for i, ch := range entered {
			if err := await(t, ch, "Enter"); err != nil {
				t.Fatalf("member %d: %v", i, err)
			}
		}
		before := received(t, cs)
		var left []<-chan error
		for _, d := range ds {
			left = append(left, async(func() error { return d.Leave(ctx) }))
		}
		for i, ch := range left {
			if err := await(t, ch, "Leave"); err != nil {
				t.Fatalf("member %d: %v", i, err)
			}
		}
		least = min(least, received(t, cs)-before)
	}
	t.Logf("Leave of a round of %d members: %d requests (least of %d rounds)", members, least, rounds)
	// 62 when each look read the barrier's data, the listing and the
	// ready node, and every member's Stat again.
	if least > 50 {
		t.Fatalf("Leave of a round of %d members took %d requests; want at most 50", members, least)
	}
}
