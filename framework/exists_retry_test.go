package framework

import (
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/zktest"
)

// An exists whose first attempt fails answers from its retry alone: with
// nil for a missing node. go-zookeeper's Exists answers "true" with a zero
// Stat when the request fails, and a retry that met "no node" kept that
// Stat, so a missing node looked present with czxid 0 (found by the chaos
// run's barrier checker).
func TestExistsFailedAttemptAnswersFromTheRetry(t *testing.T) {
	for _, watch := range []bool{false, true} {
		name := "Exists"
		if watch {
			name = "ExistsW"
		}
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t)
			ns := newNamespace(t)
			proxy := zktest.NewProxy(t, server(t).Addr())
			c := connect(t, proxy.Addr(), WithNamespace(ns))
			fired := proxy.FailNextExistsReply(-118) // session moved: retried
			var err error
			var stat *zk.Stat
			if watch {
				stat, _, err = c.ExistsW(ctx, "/missing")
			} else {
				stat, err = c.Exists(ctx, "/missing")
			}
			waitClosed(t, fired, testTimeout, "failed exists reply")
			if err != nil || stat != nil {
				t.Fatalf("%s of a missing node after a failed attempt = %+v, %v; want nil, nil", name, stat, err)
			}
		})
	}
}
