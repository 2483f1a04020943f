package node_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/node"
)

// A slow (here: blocked) listener keeps its events in order, and blocks
// nobody: not the Node, which makes its node again, not another listener,
// which hears every change at once, not Close. Its queue stays bounded
// while the Node fails the same way again and again (a parent it may not
// create under, retried with back-off): each failure that says nothing
// new is not an event. It was one event per attempt, a queue that grew
// for as long as the failure lasted.
func TestBlockedListener(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	admin := testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
	if _, err := admin.Create(ctx, "/locked", nil, framework.WithMode(framework.Persistent)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Delete(context.Background(), "/locked") })
	core, logs := observer.New(zap.DebugLevel)
	n := node.New(c, "/locked/p", []byte("x"), node.WithLogger(zap.New(core)))
	release := make(chan struct{})
	blocked := make(chan node.Event, 64)
	stopBlocked := n.Listen(func(ev node.Event) {
		<-release
		blocked <- ev
	})
	defer stopBlocked()
	rec := record(t, n)
	start(t, n)

	// The Node may no longer create under /locked; its node is deleted.
	if _, err := admin.SetACL(ctx, "/locked", zk.WorldACL(zk.PermRead|zk.PermDelete|zk.PermAdmin), -1); err != nil {
		t.Fatal(err)
	}
	if err := admin.Delete(ctx, "/locked/p"); err != nil {
		t.Fatal(err)
	}
	_, i := rec.await(t, 0, "Recreating(ErrNodeDeleted)", recreating(node.ErrNodeDeleted))
	rec.await(t, i, "Recreating(NoAuth)", recreating(zk.ErrNoAuth))
	const attempts = 4
	testkit.Eventually(t, fmt.Sprintf("%d failed attempts", attempts), func() bool {
		return logs.FilterMessageSnippet("attempt failed").Len() >= attempts
	})
	noAuth := 0
	for _, ev := range rec.all() {
		if ev.State == node.Recreating && errors.Is(ev.Reason, zk.ErrNoAuth) {
			noAuth++
		}
	}
	if noAuth != 1 {
		t.Fatalf("%d Recreating(NoAuth) events for %d attempts failing alike, want 1: %+v", noAuth, logs.FilterMessageSnippet("attempt failed").Len(), rec.all())
	}

	// Allowed again: registered, heard by the other listener while the
	// blocked one still holds its first event.
	if _, err := admin.SetACL(ctx, "/locked", zk.WorldACL(zk.PermAll), -1); err != nil {
		t.Fatal(err)
	}
	rec.await(t, i, "registered again", registered)
	done := make(chan error, 1)
	go func() { done <- n.Close(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(testkit.Deadline):
		t.Fatal("Close held up by a blocked listener")
	}
	if st := stat(t, admin, "/locked/p"); st != nil {
		t.Fatalf("node left: %+v", st)
	}
	want := rec.all()
	if want[len(want)-1].State != node.Closed {
		t.Fatalf("events %+v, want Closed last", want)
	}
	close(release)
	var got []node.Event
	for len(got) < len(want) {
		select {
		case ev := <-blocked:
			got = append(got, ev)
		case <-time.After(testkit.Deadline):
			t.Fatalf("blocked listener heard %d of %d events", len(got), len(want))
		}
	}
	states := func(evs []node.Event) []string {
		var s []string
		for _, ev := range evs {
			s = append(s, fmt.Sprint(ev.State, ev.Czxid, ev.Reason))
		}
		return s
	}
	if !slices.Equal(states(got), states(want)) {
		t.Fatalf("blocked listener heard %v, want %v", states(got), states(want))
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, c)
}
