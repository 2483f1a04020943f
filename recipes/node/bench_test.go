package node_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/node"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/zktest"
)

// benchSession is the session timeout of the benchmark's registrations:
// each round costs about one.
const benchSession = 2 * time.Second

// Re-registration after a session expiry, ours next to Curator 5.4's
// PersistentNode in the same run: the registering client is cut off until
// it declares its session lost (at half the session timeout, both), then
// let back, so it is in a new session while the server still holds the old
// session's node. The time measured runs from the old node's deletion (the
// server expiring the session) to the new node's creation, both seen by an
// observer's watch: how fast a registration reacts to "the node is gone".
// Ours waits on a persistent watch of the path; Curator adopted the old
// node on reconnecting (CURATOR-154) and re-creates it from its watch.
// Each round takes about one session timeout:
//
//	go test -run '^$' -bench Reregistration -benchtime 20x ./recipes/node
func BenchmarkReregistrationAfterExpiry(b *testing.B) {
	b.Run("gocurator", func(b *testing.B) {
		proxy := zktest.NewProxy(b, zkAddr)
		c := testkit.Connect(b, proxy.Addr(), "", framework.WithSessionTimeout(benchSession),
			framework.WithSessionExpiryPercent(50), framework.WithRetryPolicy(retry.Forever(20*time.Millisecond)))
		path := "/bench/" + testkit.Unique(b)
		n := node.New(c, path, []byte("go"))
		if err := n.Start(testkit.Ctx(b)); err != nil {
			b.Fatal(err)
		}
		defer func() { _ = n.Close(context.Background()) }()
		measure(b, path, func() {
			proxy.Cut()
			testkit.WaitState(b, c, connstate.Lost)
			proxy.Restore()
		}, func() bool { return n.Registered() })
	})
	b.Run("curator", func(b *testing.B) {
		proxy := zktest.NewProxy(b, zkAddr)
		java := curatorjava.StartDriver(b, zkAddr)
		java.MustDo(fmt.Sprintf("nclient bc %s %d 50", proxy.Addr(), benchSession.Milliseconds()))
		path := "/bench/" + testkit.Unique(b)
		java.MustDo("pnodeOn bn bc " + path + " EPHEMERAL java")
		if got := java.MustDo("pnodeWait bn 30000"); got != "true" {
			b.Fatalf("waitForInitialCreate: %s", got)
		}
		admin := testkit.Connect(b, zkAddr, "")
		owner := func() int64 {
			st, err := admin.Exists(context.Background(), path)
			if err != nil || st == nil {
				return 0
			}
			return st.EphemeralOwner
		}
		last := owner()
		measure(b, path, func() {
			proxy.Cut()
			if err := java.WaitEvent("nstate bc LOST", time.Minute); err != nil {
				b.Fatal(err)
			}
			proxy.Restore()
		}, func() bool {
			// Back, in a new session.
			if o := owner(); o != 0 && o != last {
				last = o
				return true
			}
			return false
		})
		java.MustDo("pnodeClose bn")
		java.MustDo("nclientClose bc")
	})
}

// measure runs b.N rounds of expire, each timed from the deletion of the
// registration's node to its next creation as an observer's watch sees
// them, waiting for back (the registration settled in its new session)
// before the next round, and reports the median and the 99th percentile.
func measure(b *testing.B, path string, expire func(), back func() bool) {
	admin := testkit.Connect(b, zkAddr, "")
	// Not testkit.Ctx: the Watcher must outlive its deadline, which 20
	// rounds of an expiry each pass.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := admin.Watch(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	// The Watcher gives a consumer that is not at its channel each path's
	// last event, so a deletion and the creation after it would be one
	// Created if they both came while the loop below runs expire: a
	// goroutine stays at the channel and stamps every event as it comes.
	type seen struct {
		typ framework.WatchEventType
		at  time.Time
	}
	events := make(chan seen, 1024)
	go func() {
		defer close(events)
		for ev := range w.Events() {
			events <- seen{ev.Type, time.Now()}
		}
	}()
	defer func() {
		_ = w.Close()
		for range events {
		}
	}()
	var took []time.Duration
	b.ResetTimer()
	for range b.N {
		expire()
		var gone time.Time
		for deadline := time.After(time.Minute); ; {
			var ev seen
			select {
			case ev = <-events:
			case <-deadline:
				b.Fatal("the node never came back")
			}
			if ev.typ == framework.WatchDeleted {
				gone = ev.at
			}
			if ev.typ == framework.WatchCreated && !gone.IsZero() {
				took = append(took, ev.at.Sub(gone))
				break
			}
		}
		testkit.Eventually(b, "registered in the new session", back)
	}
	b.StopTimer()
	slices.Sort(took)
	p := func(q float64) time.Duration { return took[min(len(took)-1, int(q*float64(len(took))))] }
	b.ReportMetric(float64(p(0.5).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p(0.99).Microseconds())/1000, "p99-ms")
	b.Logf("deleted → created, %d rounds: p50 %v, p99 %v, max %v", len(took), p(0.5), p(0.99), took[len(took)-1])
}
