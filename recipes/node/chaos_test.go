package node_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/node"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/zktest"
)

var chaosFor = flag.Duration("node.chaos", 6*time.Second,
	"how long TestChaosRegisteredMeansOwned injects faults (make node-chaos runs it for a minute)")

// The server goes away for longer than the session: the client declares
// its session lost, and when the server is back (it keeps the old session,
// and our old node, until the session times out again) the Node waits for
// the old node to go and makes its own in the new session.
func TestServerRestartAfterSessionLoss(t *testing.T) {
	t.Parallel()
	srv := zktest.StartServer(t)
	ns := testkit.Unique(t)
	c := testkit.Connect(t, srv.ConnectString(), ns, framework.WithSessionTimeout(2*time.Second),
		framework.WithRetryPolicy(retry.Forever(100*time.Millisecond)))
	n := node.New(c, "/restart/n", []byte("d"))
	defer closeNode(t, n)
	rec := record(t, n)
	start(t, n)
	old := n.Status()
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	_, i := rec.await(t, 0, "Recreating(ErrSessionLost)", recreating(node.ErrSessionLost))
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	ev, _ := rec.await(t, i, "registered in a new session", registered)
	if ev.Session == old.Session || ev.Czxid == old.Czxid || ev.Session != c.SessionID() {
		t.Fatalf("registered %+v after the restart; old %+v, live session 0x%x", ev, old, c.SessionID())
	}
	admin := testkit.Connect(t, srv.ConnectString(), ns)
	if st := stat(t, admin, "/restart/n"); st == nil || st.EphemeralOwner != ev.Session || st.Czxid != ev.Czxid {
		t.Fatalf("node %+v, event %+v", st, ev)
	}
	if got := data(t, admin, "/restart/n"); got != "d" {
		t.Fatalf("data %q", got)
	}
}

// A brief server restart within the session: the node and the session
// survive, and the Node keeps its registration without making it again.
func TestServerRestartWithinSession(t *testing.T) {
	t.Parallel()
	srv := zktest.StartServer(t)
	ns := testkit.Unique(t)
	c := testkit.Connect(t, srv.ConnectString(), ns, framework.WithSessionTimeout(20*time.Second),
		framework.WithErrorPolicy(connstate.SessionPolicy{}))
	n := node.New(c, "/restart/n", nil)
	defer closeNode(t, n)
	start(t, n)
	before := n.Status()
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitState(t, c, connstate.Suspended)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitState(t, c, connstate.Reconnected)
	if err := c.Sync(testkit.Ctx(t), "/restart/n"); err != nil {
		t.Fatal(err)
	}
	if after := n.Status(); after.State != node.Registered || after.Czxid != before.Czxid || !n.Registered() {
		t.Fatalf("after a restart within the session: %+v, before %+v", after, before)
	}
}

// The chaos proof: a registration under connection faults (loud cuts and
// silent partitions, longer and shorter than the session, and latency),
// checked on the server all along. Whenever the Node says Registered before
// and after a read of the node on the server, with the same incarnation,
// the read shows that node, owned by that session. Run it longer with
// -node.chaos=1m.
func TestChaosRegisteredMeansOwned(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns, framework.WithSessionTimeout(time.Second),
		framework.WithRetryPolicy(retry.Forever(50*time.Millisecond)))
	admin := testkit.Connect(t, zkAddr, ns)
	n := node.New(c, "/chaos/member", []byte("m"))
	defer closeNode(t, n)
	start(t, n)

	ctx, stop := context.WithTimeout(context.Background(), *chaosFor+testkit.Deadline)
	defer stop()
	var (
		checks, owned, registrations atomic.Int64
		wg                           sync.WaitGroup
	)
	cancel := n.Listen(func(ev node.Event) {
		if ev.State == node.Registered {
			registrations.Add(1)
		}
	})
	defer cancel()
	wg.Add(1)
	go func() { // the checker
		defer wg.Done()
		for ctx.Err() == nil {
			s1, r1 := n.Status(), n.Registered()
			st, err := admin.Exists(ctx, "/chaos/member")
			s2, r2 := n.Status(), n.Registered()
			if err != nil {
				continue
			}
			checks.Add(1)
			if !r1 || !r2 || s1.Czxid != s2.Czxid {
				continue
			}
			owned.Add(1)
			if st == nil || st.EphemeralOwner != s1.Session || st.Czxid != s1.Czxid {
				t.Errorf("Registered as %+v while the server has %+v", s1, st)
				return
			}
		}
	}()
	seed := time.Now().UnixNano()
	t.Logf("fault seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	end := time.Now().Add(*chaosFor)
	faults := 0
	for time.Now().Before(end) && !t.Failed() {
		down := time.Duration(rng.IntN(1500)) * time.Millisecond // around the 1s session
		switch rng.IntN(3) {
		case 0:
			proxy.Cut()
		case 1:
			proxy.BlackHole()
		case 2:
			proxy.SetDelay(time.Duration(rng.IntN(100)) * time.Millisecond)
		}
		faults++
		if c.Pause(ctx, down) != nil {
			break
		}
		proxy.Restore()
		proxy.SetDelay(0)
		if c.Pause(ctx, time.Duration(rng.IntN(1000))*time.Millisecond) != nil {
			break
		}
	}
	proxy.Restore()
	// The Node comes back to Registered at the end.
	testkit.Eventually(t, "registered after the chaos", func() bool {
		st := stat(t, admin, "/chaos/member")
		return n.Registered() && st != nil && st.EphemeralOwner == c.SessionID()
	})
	stop()
	wg.Wait()
	t.Logf("%d faults, %d server checks, %d while registered, %d registrations", faults, checks.Load(), owned.Load(), registrations.Load())
	if owned.Load() == 0 {
		t.Fatal("no check ran while registered")
	}
}

// The abandoned-write chaos workload (issue 33 item 1, pitfall 25): Nodes
// started with short contexts and closed at random moments (from their
// Recreating event, after their node was deleted, with short contexts,
// during cuts, silent partitions and latency around a 2 s session). Once
// the faults stop, nothing of theirs may stay: a Close's background
// delete finishes, a dead session's node goes with it, and a node made
// after its Close returned would stay for good.
func TestChaosClosedNodesLeaveNothing(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns, framework.WithSessionTimeout(2*time.Second),
		framework.WithRetryPolicy(retry.Forever(50*time.Millisecond)))
	admin := testkit.Connect(t, zkAddr, ns)
	ctx, stop := context.WithTimeout(context.Background(), *chaosFor+testkit.Deadline)
	defer stop()
	end := time.Now().Add(*chaosFor)
	seed := time.Now().UnixNano()
	t.Logf("fault seed %d", seed)

	var (
		wg               sync.WaitGroup
		nodes, closedRec atomic.Int64
	)
	const workers = 4
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(seed), uint64(w+1)))
			for i := 0; time.Now().Before(end) && ctx.Err() == nil; i++ {
				p := fmt.Sprintf("/chaos/w%d/n%d", w, i)
				n := node.New(c, p, nil)
				nodes.Add(1)
				var once sync.Once
				closeInListener := rng.IntN(2) == 0
				listenerWait := time.Duration(rng.IntN(500)) * time.Millisecond
				cancel := n.Listen(func(ev node.Event) {
					if closeInListener && ev.State == node.Recreating {
						once.Do(func() {
							closedRec.Add(1)
							cctx, ccancel := context.WithTimeout(ctx, listenerWait)
							_ = n.Close(cctx)
							ccancel()
						})
					}
				})
				sctx, scancel := context.WithTimeout(ctx, time.Duration(50+rng.IntN(500))*time.Millisecond)
				err := n.Start(sctx)
				scancel()
				if err == nil && rng.IntN(2) == 0 {
					_ = admin.Delete(ctx, p) // made again, or closed from Recreating
				}
				_ = c.Pause(ctx, time.Duration(rng.IntN(100))*time.Millisecond)
				cctx, ccancel := context.WithTimeout(ctx, time.Duration(rng.IntN(500))*time.Millisecond)
				_ = n.Close(cctx) // an error: the delete goes on in the background
				ccancel()
				cancel()
			}
		}()
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	faults := 0
	for time.Now().Before(end) {
		switch rng.IntN(3) {
		case 0:
			proxy.Cut()
		case 1:
			proxy.BlackHole()
		case 2:
			proxy.SetDelay(time.Duration(rng.IntN(50)) * time.Millisecond)
		}
		faults++
		if c.Pause(ctx, time.Duration(rng.IntN(3000))*time.Millisecond) != nil {
			break
		}
		proxy.Restore()
		proxy.SetDelay(0)
		if c.Pause(ctx, time.Duration(rng.IntN(1000))*time.Millisecond) != nil {
			break
		}
	}
	proxy.Restore()
	proxy.SetDelay(0)
	wg.Wait()
	left := func() []string {
		var out []string
		for w := range workers {
			for _, kid := range testkit.Children(t, admin, fmt.Sprintf("/chaos/w%d", w)) {
				out = append(out, fmt.Sprintf("w%d/%s", w, kid))
			}
		}
		return out
	}
	testkit.Eventually(t, "nothing left of the closed Nodes", func() bool { return len(left()) == 0 })
	t.Logf("%d faults, %d Nodes, %d closed from their Recreating event", faults, nodes.Load(), closedRec.Load())
}
