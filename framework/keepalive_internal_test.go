package framework

import (
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/internal/clock"
	"github.com/gocurator/curator/internal/zkconn"
	"github.com/gocurator/curator/zktest"
)

// The keepalive on the client's clock against a real server: it pings
// once the last answered send is an interval old, the server's reply
// acknowledges the ping's send time, and an answered request of the
// client's puts the next ping off. The fake clock moves only here; what the
// keepalive goroutine does after a step is waited for.
func TestKeepaliveOnClock(t *testing.T) {
	fake := clock.NewFake(time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC))
	start := fake.Now()
	c := connectNS(t, newNamespace(t), WithSessionTimeout(2*time.Second), withClock(fake))
	ctx := testCtx(t)
	every := keepaliveInterval(c.SessionTimeout())
	c.mu.Lock()
	w := c.h.wire
	c.mu.Unlock()
	armedFor := func(due time.Time) {
		t.Helper()
		eventually(t, testTimeout, "keepalive armed for "+due.Sub(start).String(), func() (bool, error) {
			return slices.ContainsFunc(fake.Pending(), due.Equal), nil
		})
	}
	lastPing := w.LastPing

	// Armed at the connect response for at once (maybe just after
	// Connect returned); the connect request (sent at start) puts the
	// first ping an interval after it.
	armedFor(start)
	fake.Advance(0)
	armedFor(start.Add(every))
	if !lastPing().IsZero() {
		t.Fatalf("pinged at %v before an interval passed", lastPing().Sub(start))
	}
	fake.Advance(every)
	ping := fake.Now()
	// On the fake clock every request sent now carries the ping's time
	// (go-zookeeper's own pings too), so wait for the keepalive to have
	// recorded its ping as well as for an acknowledgement of that time.
	eventually(t, testTimeout, "the ping sent and its reply acknowledged", func() (bool, error) {
		return w.Acked().Equal(ping) && lastPing().Equal(ping), nil
	})
	if !lastPing().Equal(ping) {
		t.Fatalf("last ping at %v, want %v", lastPing().Sub(start), ping.Sub(start))
	}
	armedFor(ping.Add(every))

	// A request answered half an interval later: no ping at the next
	// look, the one after is an interval after the request.
	fake.Advance(every / 2)
	asked := fake.Now()
	if _, err := c.Exists(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	if !w.Acked().Equal(asked) {
		t.Fatalf("acked %v, want the Exists' send %v", w.Acked().Sub(start), asked.Sub(start))
	}
	fake.Advance(every / 2)
	armedFor(asked.Add(every))
	if !lastPing().Equal(ping) {
		t.Fatalf("pinged at %v although a request was answered half an interval before", lastPing().Sub(start))
	}
}

// A server that is gone for good (its port refused) is redialled at once,
// then at the paced interval, never in a busy loop nor a second apart,
// and the session is still Lost in time: by the client's own watchdog,
// within the session timeout of the last answered send.
func TestRedialRefusedServerPaced(t *testing.T) {
	proxy := zktest.NewProxy(t, server(t).Addr())
	var (
		mu    sync.Mutex
		dials []time.Time
	)
	counting := func(network, addr string, timeout time.Duration) (net.Conn, error) {
		mu.Lock()
		dials = append(dials, time.Now())
		mu.Unlock()
		return net.DialTimeout(network, addr, timeout)
	}
	const session = 2 * time.Second
	c := connect(t, proxy.Addr(), WithNamespace(newNamespace(t)), WithSessionTimeout(session), WithDialer(counting))
	states := record(c)
	defer states.cancel()
	c.mu.Lock()
	w := c.h.wire
	c.mu.Unlock()

	// Closing the proxy closes its connections and its port: from now
	// on every dial is refused.
	if err := proxy.Close(); err != nil {
		t.Fatal(err)
	}
	gone := time.Now()
	states.expect(t, testTimeout, connstate.Suspended, connstate.Lost)
	lost := time.Now()
	if late := lost.Sub(w.Acked()); late > session {
		t.Fatalf("Lost %v after the last answered send, past the %v session", late, session)
	}
	// The watchdog fires at 90% of the negotiated timeout after the last
	// answered send; the connection that replaces the old one dials at
	// once from then on, through the same dialer: only the old one's
	// dials, before that instant, are the paced redials.
	fired := w.Acked().Add(time.Duration(w.Timeout()) * time.Millisecond * 9 / 10)
	mu.Lock()
	var during []time.Time
	for _, d := range dials {
		if d.After(gone) && d.Before(lost) && d.Before(fired) {
			during = append(during, d)
		}
	}
	mu.Unlock()
	if len(during) < 3 {
		t.Fatalf("%d dials in the %v before Lost, want it to keep trying", len(during), lost.Sub(gone))
	}
	gaps := make([]time.Duration, 0, len(during))
	for i := 1; i < len(during); i++ {
		gap := during[i].Sub(during[i-1])
		gaps = append(gaps, gap)
		// Dial i after the cut is round i: it waited at least half its
		// pause (the jitter's floor).
		if floor := zkconn.RedialPause(i, session) / 2; gap < floor {
			t.Fatalf("dial %d came %v after the one before, under its pause's floor %v (a busy loop): %v", i, gap, floor, gaps)
		}
	}
	slices.Sort(gaps)
	if median := gaps[len(gaps)/2]; median > 250*time.Millisecond {
		t.Fatalf("median gap between redials %v, want the paced tens of milliseconds (go-zookeeper's was a second)", median)
	}
}
