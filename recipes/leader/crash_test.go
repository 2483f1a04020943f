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

// A leader whose client is killed without closing (its connection closes
// with the process, Cut) or whose machine vanishes (nothing more is heard,
// BlackHole) keeps its node until the server expires its session: the
// waiting candidate's term starts then, one notification later, and the
// old leader's Done (were it still running) has closed before, under
// either policy. The time from the kill to the new term is logged next to
// the session timeout (issue 13's bound: the session timeout plus one
// round trip); the test asserts only the order.
func TestCrashedLeaderFailover(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		policy connstate.ErrorPolicy
		kill   func(p *zktest.Proxy)
	}{
		{"killed/standard", connstate.StandardPolicy{}, (*zktest.Proxy).Cut},
		{"killed/session", connstate.SessionPolicy{}, (*zktest.Proxy).Cut},
		{"vanished/standard", connstate.StandardPolicy{}, (*zktest.Proxy).BlackHole},
		{"vanished/session", connstate.SessionPolicy{}, (*zktest.Proxy).BlackHole},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := testkit.Unique(t)
			ctx := testkit.Ctx(t)
			proxy := zktest.NewProxy(t, zkAddr)
			cl := testkit.Connect(t, proxy.Addr(), ns, framework.WithSessionTimeout(2*time.Second),
				framework.WithErrorPolicy(tc.policy))
			cf := testkit.Connect(t, zkAddr, ns)
			old, err := leader.New(cl, "/e", leader.WithID("old")).Campaign(ctx)
			if err != nil {
				t.Fatal(err)
			}
			st := cl.SessionTimeout()
			next := campaign(ctx, leader.New(cf, "/e", leader.WithID("next")))
			testkit.Eventually(t, "candidate queued", func() bool { return len(testkit.Children(t, cf, "/e")) == 2 })
			killed := time.Now()
			tc.kill(proxy)
			r := await(t, next, "the candidate's term")
			took := time.Since(killed)
			if r.err != nil {
				t.Fatal(r.err)
			}
			if !isClosed(old.Done()) {
				t.Fatal("the candidate leads while the crashed leader's Done is open")
			}
			if !errors.Is(old.Err(), leader.ErrLeadershipLost) {
				t.Fatalf("crashed leader's Err = %v", old.Err())
			}
			t.Logf("new term %v after the kill (session timeout %v)", took.Round(time.Millisecond), st)
			if err := r.term.Resign(ctx); err != nil {
				t.Fatal(err)
			}
			// Let the old client reconnect (in a new session), so that its
			// Close at the end has a server to answer it.
			proxy.Restore()
			if err := cl.BlockUntilConnected(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
