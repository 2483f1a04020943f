package leader_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/leader"
	"github.com/gocurator/curator/zktest"
)

// BenchmarkFailover measures a hand-over: from the leader's Resign call to
// the return of the next candidate's Campaign, with each client's round
// trip lengthened by 2 ms through a proxy. It reports p50 and p99 of the
// fail-over and, for scale, two floors through the same proxies: rtt, an
// exists round trip, and notify, from the Resign call to the firing of a
// watch that the candidate's client set on the leader's node (the delete
// must be committed and its notification sent: a write's round trip). The
// fail-over cannot be shorter than notify; it is notify plus the loop's
// own time, which sends no request.
//
//	go test ./recipes/leader -run '^$' -bench Failover -benchtime 200x
func BenchmarkFailover(b *testing.B) {
	ns := testkit.Unique(b)
	ctx := context.Background()
	const clients = 2
	es := make([]*leader.Election, clients)
	cs := make([]*framework.Client, clients)
	for i := range es {
		p := zktest.NewProxy(b, zkAddr)
		p.SetDelay(time.Millisecond) // one way: +2 ms round trip
		cs[i] = testkit.Connect(b, p.Addr(), ns)
		es[i] = leader.New(cs[i], "/e")
	}
	term, err := es[0].Campaign(ctx)
	if err != nil {
		b.Fatal(err)
	}
	next := 1
	lat := make([]time.Duration, 0, b.N)
	notify := make([]time.Duration, 0, b.N)
	rtt := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		type won struct {
			term *leader.Term
			err  error
			at   time.Time
		}
		waiting := make(chan won, 1)
		go func() {
			t, err := es[next].Campaign(ctx)
			waiting <- won{t, err, time.Now()}
		}()
		// Wait until the candidate is queued: two nodes.
		testkit.Eventually(b, "candidate queued", func() bool {
			ps, err := es[0].Participants(ctx)
			return err == nil && len(ps) == 2
		})
		t0 := time.Now()
		if _, err := cs[next].Exists(ctx, "/e"); err != nil {
			b.Fatal(err)
		}
		rtt = append(rtt, time.Since(t0))
		_, _, ch, err := cs[next].GetWOrdered(ctx, term.Node())
		if err != nil {
			b.Fatal(err)
		}
		fired := make(chan time.Time, 1)
		go func() {
			<-ch
			fired <- time.Now()
		}()
		start := time.Now()
		if err := term.Resign(ctx); err != nil {
			b.Fatal(err)
		}
		r := <-waiting
		if r.err != nil {
			b.Fatal(r.err)
		}
		lat = append(lat, r.at.Sub(start))
		notify = append(notify, (<-fired).Sub(start))
		term, next = r.term, 1-next
	}
	b.StopTimer()
	_ = term.Resign(ctx)
	report := func(ds []time.Duration, name string, p99 bool) {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, name+"p50-ms")
		if p99 {
			b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds())/1000, name+"p99-ms")
		}
	}
	report(lat, "", true)
	report(notify, "notify-", true)
	report(rtt, "rtt-", false)
}
