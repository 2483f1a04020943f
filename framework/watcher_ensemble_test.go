package framework

import (
	"context"
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/zktest"
)

// A leader change on a 3-node ensemble: every client is dropped, reconnects
// to a survivor (the same session), and the recursive watch is armed again
// there: a Resync, then the changes made after it.
func TestWatchSurvivesLeaderChange(t *testing.T) {
	ens := zktest.StartEnsemble(t, 3)
	ns := newNamespace(t)
	opts := []Option{WithNamespace(ns), WithSessionTimeout(10 * time.Second), WithRetryPolicy(retry.NTimes(30, 200*time.Millisecond))}
	c := connect(t, ens.ConnectString(), opts...)
	other := connect(t, ens.ConnectString(), opts...)
	// Elections on a loaded two-core machine can take a while.
	ctx, cancel := context.WithTimeout(context.Background(), 3*testTimeout)
	defer cancel()
	w, err := c.Watch(ctx, "/lc", Recursive())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := other.Create(ctx, "/lc/a", nil, CreatingParents()); err != nil {
		t.Fatal(err)
	}
	collect(t, w, func(ev WatchEvent) bool { return ev.Path == "/lc/a" })
	states := record(c)
	defer states.cancel()
	sid := c.SessionID()
	leader, err := ens.Leader()
	if err != nil {
		t.Fatal(err)
	}
	if err := leader.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, err := ens.AwaitLeader(ctx, leader); err != nil {
		t.Fatal(err)
	}
	states.expect(t, 2*testTimeout, connstate.Suspended)
	for {
		if s := waitEvent(t, states.ch, 2*testTimeout, "reconnection after the election"); s.IsConnected() {
			break
		}
	}
	if c.SessionID() != sid {
		t.Fatalf("session 0x%x after the election, want 0x%x", c.SessionID(), sid)
	}
	collect(t, w, func(ev WatchEvent) bool { return ev.Type == WatchResync && !ev.NewSession })
	if _, err := other.Create(ctx, "/lc/b/c", nil, CreatingParents()); err != nil {
		t.Fatal(err)
	}
	collect(t, w, func(ev WatchEvent) bool { return ev.Path == "/lc/b/c" && ev.Type == WatchCreated })
	if err := other.Delete(ctx, "/lc/a"); err != nil {
		t.Fatal(err)
	}
	collect(t, w, func(ev WatchEvent) bool { return ev.Path == "/lc/a" && ev.Type == WatchDeleted })
}
