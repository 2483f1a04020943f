package leader_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/leader"
	"github.com/gocurator/curator/zktest"
)

// A term's Err gives the reason it ended for, recorded as it ended, not
// what the connection is when Err is first read: a term ended by Suspended
// (standard policy) and read only after the session expired says
// ErrSuspended, not ErrSessionLost (before the fix Err worked the reason out
// on its first call, from the state then).
func TestTermErrIsTheReasonAtTheEnd(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns, framework.WithSessionTimeout(2*time.Second))
	e := leader.New(c, "/e")
	term, err := e.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	proxy.BlackHole() // silent: Suspended, then Lost by the client-side expiry
	testkit.WaitState(t, c, connstate.Lost)
	select {
	case <-term.Done():
	default:
		t.Fatal("term not ended after Lost")
	}
	if err := term.Err(); !errors.Is(err, leader.ErrSuspended) || errors.Is(err, leader.ErrSessionLost) {
		t.Fatalf("Err = %v, want the reason it ended for: ErrSuspended", err)
	}
	if err := term.Err(); !errors.Is(err, leader.ErrLeadershipLost) {
		t.Fatalf("Err = %v, want ErrLeadershipLost too", err)
	}
	proxy.Restore()
	testkit.WaitState(t, c, connstate.Reconnected)
}
