package leader_test

import (
	"context"
	"errors"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/leader"
)

// Issue 33 item 5's class in the election: a participant's node that the
// client may not read must not make a wait hang. Campaign, which reads its
// predecessor, Leader and Participants fail at once with zk.ErrNoAuth
// (Run returns it: no campaign can succeed), and the refused Campaign
// leaves no node.
func TestUnreadableParticipantIsReported(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	owner := testkit.Connect(t, zkAddr, ns)
	if _, err := owner.Create(ctx, "/e", nil); err != nil {
		t.Fatal(err)
	}
	// A participant in the latch layout whose data nobody may read.
	hidden, err := owner.Create(ctx, "/e/_c_00000000-0000-0000-0000-000000000000-latch-", nil,
		framework.WithMode(framework.EphemeralSequential), framework.WithACL(zk.WorldACL(zk.PermCreate|zk.PermDelete)))
	if err != nil {
		t.Fatal(err)
	}
	c := testkit.Connect(t, zkAddr, ns)
	e := leader.New(c, "/e")
	if term, err := e.Campaign(ctx); term != nil || !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("Campaign behind an unreadable node = %v, %v; want ErrNoAuth", term, err)
	}
	if err := e.Run(ctx, func(context.Context) error {
		t.Error("fn called behind an unreadable node")
		return nil
	}); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("Run behind an unreadable node = %v; want ErrNoAuth", err)
	}
	if _, err := e.Leader(ctx); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("Leader = %v; want ErrNoAuth", err)
	}
	if _, err := e.Participants(ctx); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("Participants = %v; want ErrNoAuth", err)
	}
	if n := testkit.Children(t, owner, "/e"); len(n) != 1 || "/e/"+n[0] != hidden {
		t.Fatalf("children %v, want the unreadable node alone", n)
	}
	if err := owner.Delete(ctx, hidden); err != nil {
		t.Fatal(err)
	}
}
