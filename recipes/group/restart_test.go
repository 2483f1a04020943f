package group_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/group"
	"github.com/gocurator/curator/recipes/node"
)

// Issue 33 item 14 through a member: by default a member whose id is held
// by another session waits (here its ctx ends first: the error names the
// owner and matches ErrOwnedByOtherSession); with TakeOver it joins at
// once, and the member it displaced waits for the id, never taking it
// back.
func TestSecondOwnerWaitsOrTakesOver(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	c1 := testkit.Connect(t, zkAddr, ns)
	c2 := testkit.Connect(t, zkAddr, ns)
	first := group.New(c1, "/g", "same", []byte("first"))
	defer closeMember(t, first)
	startMember(t, first)

	waiting := group.New(c2, "/g", "same", []byte("second"))
	ctx, cancel := context.WithTimeout(testkit.Ctx(t), 500*time.Millisecond)
	err := waiting.Start(ctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, group.ErrOwnedByOtherSession) || !strings.Contains(err.Error(), "0x") {
		t.Fatalf("Start over a live member = %v, want the deadline and ErrOwnedByOtherSession with the owner", err)
	}
	closeMember(t, waiting)

	lost := make(chan node.Event, 16)
	stop := first.Node().Listen(func(ev node.Event) {
		if ev.State == node.Recreating {
			lost <- ev
		}
	})
	defer stop()
	taker := group.New(c2, "/g", "same", []byte("taker"), group.TakeOver())
	startMember(t, taker)
	awaitMembers(t, first, map[string]string{"same": "taker"})
	timer := time.NewTimer(testkit.Deadline)
	defer timer.Stop()
wait:
	for {
		select {
		case ev := <-lost:
			if errors.Is(ev.Reason, group.ErrOwnedByOtherSession) {
				break wait
			}
		case <-timer.C:
			t.Fatal("the displaced member never waited on the taker")
		}
	}
	if first.Node().Registered() {
		t.Fatal("the displaced member still reports itself registered")
	}
	closeMember(t, taker)
	testkit.Eventually(t, "the displaced member back", func() bool { return first.Node().Registered() })
	awaitMembers(t, first, map[string]string{"same": "first"})
}
