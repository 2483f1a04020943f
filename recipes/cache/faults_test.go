package cache_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/cache"
	"github.com/gocurator/curator/zktest"
)

var longConvergence = flag.Int("cache.rounds", 1, "rounds of each fault in the convergence tests (make cache-chaos runs 20)")

// roundsCtx is testkit.Ctx with a deadline for every round.
func roundsCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(max(*longConvergence, 1))*testkit.Deadline)
	t.Cleanup(cancel)
	return ctx
}

// CURATOR-391: a node deleted and made again while the cache was cut off,
// with the same version (0) and new data, is seen: the resync compares
// czxid, not version.
func TestDeleteRecreateDuringCutSeen(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	proxy := zktest.NewProxy(t, zkAddr)
	c := testkit.Connect(t, proxy.Addr(), ns)
	other := testkit.Connect(t, zkAddr, ns)
	mustCreate(t, ctx, other, "/r/n", "old")
	ch := cache.New(c, "/r")
	t.Cleanup(func() { _ = ch.Close() })
	if err := ch.Start(ctx); err != nil {
		t.Fatal(err)
	}
	rec, cancel := record(ch)
	defer cancel()
	before, _ := ch.Get("/r/n")
	proxy.Cut()
	testkit.WaitState(t, c, connstate.Suspended)
	mustDelete(t, ctx, other, "/r/n")
	mustCreate(t, ctx, other, "/r/n", "new")
	proxy.Restore()
	rec.await(t, "resynced", func(ev cache.Event) bool { return ev.Type == cache.Resynced && ev.Reason == cache.Reconnected })
	after, ok := ch.Get("/r/n")
	if !ok || string(after.Data) != "new" || after.Stat.Version != before.Stat.Version || after.Stat.Czxid == before.Stat.Czxid {
		t.Fatalf("after the cut: %q version %d czxid %d (before: %q version %d czxid %d)",
			after.Data, after.Stat.Version, after.Stat.Czxid, before.Data, before.Stat.Version, before.Stat.Czxid)
	}
	evs := rec.snapshot()
	var got []string
	for _, ev := range evs {
		got = append(got, ev.Type.String()+" "+ev.Path)
	}
	want := []string{"deleted /r/n", "created /r/n", "resynced /r"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	converged(t, ctx, ch, other, "/r", -1)
}

// writers churns a small tree from several clients: creates, sets,
// deletes (of subtrees) and delete-then-create, ops each.
func churn(ctx context.Context, clients []*framework.Client, root string, ops int, seed int64) {
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Add(1)
		go func(c *framework.Client, rnd *rand.Rand) {
			defer wg.Done()
			for n := 0; n < ops && ctx.Err() == nil; n++ {
				p := fmt.Sprintf("%s/%d", root, rnd.Intn(3))
				for d := rnd.Intn(3); d > 0; d-- {
					p = fmt.Sprintf("%s/%d", p, rnd.Intn(3))
				}
				data := []byte(fmt.Sprint(rnd.Int63()))
				switch rnd.Intn(4) {
				case 0:
					_, _ = c.Create(ctx, p, data, framework.CreatingParents())
				case 1:
					_, _ = c.Set(ctx, p, data, -1)
				case 2:
					_ = c.Delete(ctx, p, framework.DeletingChildren(), framework.Quietly())
				case 3:
					_ = c.Delete(ctx, p, framework.DeletingChildren(), framework.Quietly())
					_, _ = c.Create(ctx, p, data[:1], framework.CreatingParents())
				}
			}
		}(c, rand.New(rand.NewSource(seed+int64(i))))
	}
	wg.Wait()
}

// The convergence proof: 4 clients change the tree while the cache's
// client is cut off, silently partitioned, expired, and its server
// restarted; after each, with the writers stopped, the cache (Synced)
// matches a server snapshot exactly, in both watch modes. -cache.rounds
// repeats each fault.
func TestConvergesUnderFaults(t *testing.T) {
	t.Parallel()
	srv := zktest.StartServer(t)
	for _, mode := range []struct {
		name string
		opts []cache.Option
	}{{"persistent", nil}, {"one-shot", []cache.Option{cache.OneShotWatches()}},
		{"load-sessions", []cache.Option{cache.WithLoadSessions(3)}}} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			ns := testkit.Unique(t)
			ctx := roundsCtx(t)
			proxy := zktest.NewProxy(t, srv.Addr())
			c := testkit.Connect(t, proxy.Addr(), ns, framework.WithSessionTimeout(2*time.Second))
			var writers []*framework.Client
			for i := 0; i < 4; i++ {
				writers = append(writers, testkit.Connect(t, srv.Addr(), ns))
			}
			mustCreate(t, ctx, writers[0], "/t", "")
			ch := cache.New(c, "/t", mode.opts...)
			t.Cleanup(func() { _ = ch.Close() })
			if err := ch.Start(ctx); err != nil {
				t.Fatal(err)
			}
			faults := []struct {
				name          string
				apply, repair func()
			}{
				{"none", func() {}, func() {}},
				// The cut or partition is seen once the client is not
				// connected: Suspended, or Lost when a 2 s session's watchdog
				// (0.9 T after the last answered send) came first or the
				// waiter, on a loaded machine, missed the short Suspended.
				{"cut", proxy.Cut, func() { awaitDisconnected(t, c); proxy.Restore() }},
				{"partition", proxy.BlackHole, func() { awaitDisconnected(t, c); proxy.Restore() }},
				{"expiry", proxy.BlackHole, func() { testkit.WaitState(t, c, connstate.Lost); proxy.Restore() }},
				{"restart", func() {
					if err := srv.Restart(); err != nil {
						t.Error(err)
					}
				}, func() {}},
			}
			seed := time.Now().UnixNano()
			t.Logf("seed %d", seed)
			for round := 0; round < *longConvergence; round++ {
				for i, f := range faults {
					f.apply()
					churn(ctx, writers, "/t", 40, seed+int64(100*round+10*i))
					f.repair()
					churn(ctx, writers, "/t", 10, seed+int64(100*round+10*i+5))
					// The snapshot is read by the cache's own client, after
					// its own Synced barrier.
					converged(t, ctx, ch, c, "/t", -1)
					if t.Failed() {
						t.Fatalf("diverged after %s, round %d", f.name, round)
					}
				}
			}
		})
	}
}

// An ensemble whose leader dies: the cache's client moves to another
// server, and the cache converges.
func TestConvergesAcrossLeaderChange(t *testing.T) {
	t.Parallel()
	ens := zktest.StartEnsemble(t, 3)
	ns := testkit.Unique(t)
	ctx := roundsCtx(t)
	c := testkit.Connect(t, ens.ConnectString(), ns)
	w := testkit.Connect(t, ens.ConnectString(), ns)
	mustCreate(t, ctx, w, "/t", "")
	ch := cache.New(c, "/t")
	t.Cleanup(func() { _ = ch.Close() })
	if err := ch.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// A cache whose loads read over three sessions, which may be served
	// by other servers than its watch's.
	c3 := testkit.Connect(t, ens.ConnectString(), ns)
	ch3 := cache.New(c3, "/t", cache.WithLoadSessions(3))
	t.Cleanup(func() { _ = ch3.Close() })
	if err := ch3.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for round := 0; round < *longConvergence; round++ {
		leader, err := ens.Leader()
		if err != nil {
			t.Fatal(err)
		}
		if err := leader.Kill(); err != nil {
			t.Fatal(err)
		}
		churn(ctx, []*framework.Client{w}, "/t", 30, int64(round))
		if _, err := ens.AwaitLeader(ctx, leader); err != nil {
			t.Fatal(err)
		}
		if err := leader.Restart(); err != nil {
			t.Fatal(err)
		}
		churn(ctx, []*framework.Client{w}, "/t", 30, int64(round)+7)
		converged(t, ctx, ch, c, "/t", -1)
		converged(t, ctx, ch3, c3, "/t", -1)
	}
}

// awaitDisconnected waits until c says it is not connected (Suspended or
// Lost).
func awaitDisconnected(t *testing.T, c *framework.Client) {
	t.Helper()
	testkit.Eventually(t, "the client disconnected", func() bool { return !c.State().IsConnected() })
}
