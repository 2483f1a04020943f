package leader_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/leader"
	"github.com/gocurator/curator/zktest"
)

// BenchmarkFailover measures a hand-over: from the leader's Resign call to
// the return of the next candidate's Campaign, with each client's round
// trip lengthened by 2 ms through a proxy. It reports p50 and p99.
//
//	go test ./recipes/leader -run '^$' -bench Failover -benchtime 200x
func BenchmarkFailover(b *testing.B) {
	ns := testkit.Unique(b)
	ctx := context.Background()
	const clients = 2
	es := make([]*leader.Election, clients)
	for i := range es {
		p := zktest.NewProxy(b, zkAddr)
		p.SetDelay(time.Millisecond) // one way: +2 ms round trip
		es[i] = leader.New(testkit.Connect(b, p.Addr(), ns), "/e")
	}
	term, err := es[0].Campaign(ctx)
	if err != nil {
		b.Fatal(err)
	}
	next := 1
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		waiting := make(chan result, 1)
		go func() {
			t, err := es[next].Campaign(ctx)
			waiting <- result{t, err}
		}()
		// Wait until the candidate is queued: two nodes.
		testkit.Eventually(b, "candidate queued", func() bool {
			ps, err := es[0].Participants(ctx)
			return err == nil && len(ps) == 2
		})
		start := time.Now()
		if err := term.Resign(ctx); err != nil {
			b.Fatal(err)
		}
		r := <-waiting
		if r.err != nil {
			b.Fatal(r.err)
		}
		lat = append(lat, time.Since(start))
		term, next = r.term, 1-next
	}
	b.StopTimer()
	_ = term.Resign(ctx)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
