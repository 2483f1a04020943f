package framework

import (
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/internal/clock"
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

// The redial pace, as a table: the first round at once, then 10 ms
// doubling, never over an eightieth of the session timeout cut to
// [10 ms, 250 ms].
func TestRedialPause(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name    string
		timeout time.Duration
		want    []time.Duration // rounds 0, 1, 2, ...
	}{
		{"4s session", 4 * time.Second, []time.Duration{0, 10 * ms, 20 * ms, 40 * ms, 50 * ms, 50 * ms}},
		{"shortest session", 400 * ms, []time.Duration{0, 10 * ms, 10 * ms, 10 * ms}},
		{"60s session", time.Minute, []time.Duration{0, 10 * ms, 20 * ms, 40 * ms, 80 * ms, 160 * ms, 250 * ms, 250 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for round, want := range tt.want {
				if got := redialPause(round, tt.timeout); got != want {
					t.Fatalf("round %d: pause %v, want %v", round, got, want)
				}
			}
			if got := redialPause(1000, tt.timeout); got != tt.want[len(tt.want)-1] {
				t.Fatalf("round 1000: pause %v, want the cap %v", got, tt.want[len(tt.want)-1])
			}
		})
	}
	for _, d := range []time.Duration{0, 1, 10 * ms, 250 * ms} {
		for range 100 {
			if j := jitter(d); j < d/2 || j > d {
				t.Fatalf("jitter(%v) = %v, outside [%v, %v]", d, j, d/2, d)
			}
		}
	}
}

// pacedHosts on a fake clock: go-zookeeper never hears retryStart (its
// one-second sleep) while the connection is wanted; each round of the
// servers after the first waits its pause, a connection resets the pace,
// and once the connection is given up Next reports retryStart at once, so
// go-zookeeper's loop looks at its Close.
func TestPacedHostsNext(t *testing.T) {
	fake := clock.NewFake(time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC))
	inner := &trackedHosts{}
	if err := inner.Init([]string{"zk1:2181"}); err != nil {
		t.Fatal(err)
	}
	gone := make(chan struct{})
	p := &pacedHosts{HostProvider: inner, clock: fake, gone: gone, timeout: func() time.Duration { return 4 * time.Second }}
	type next struct {
		retryStart bool
	}
	call := func() <-chan next {
		ch := make(chan next, 1)
		go func() {
			_, rs := p.Next()
			ch <- next{rs}
		}()
		return ch
	}
	// returned waits for a Next that needs no clock step.
	returned := func(what string, ch <-chan next, wantRetryStart bool) {
		t.Helper()
		n := waitEvent(t, ch, testTimeout, what)
		if n.retryStart != wantRetryStart {
			t.Fatalf("%s: retryStart %v, want %v", what, n.retryStart, wantRetryStart)
		}
	}
	// paused checks that Next waits for one timer within [want/2, want],
	// steps the clock to it and waits for Next.
	paused := func(what string, want time.Duration) {
		t.Helper()
		ch := call()
		var due []time.Time
		eventually(t, testTimeout, what+": pause armed", func() (bool, error) {
			due = fake.Pending()
			return len(due) == 1, nil
		})
		if d := due[0].Sub(fake.Now()); d < want/2 || d > want {
			t.Fatalf("%s: paused %v, want within [%v, %v]", what, d, want/2, want)
		}
		select {
		case <-ch:
			t.Fatalf("%s: Next returned before its pause", what)
		default:
		}
		fake.Advance(due[0].Sub(fake.Now()))
		returned(what, ch, false)
	}

	returned("the first dial", call(), false)
	p.Connected()
	// Cut: every Next from now on starts a round of the one server.
	returned("the redial after a cut", call(), false)
	for round, want := range []time.Duration{10, 20, 40, 50, 50} {
		paused(fmt.Sprintf("round %d", round+1), want*time.Millisecond)
	}
	p.Connected()
	returned("the redial after the next cut", call(), false)
	paused("its second round", 10*time.Millisecond)

	// Given up while pausing: Next returns at once, with retryStart.
	ch := call()
	eventually(t, testTimeout, "pause armed", func() (bool, error) { return len(fake.Pending()) == 1, nil })
	close(gone)
	returned("given up while pausing", ch, true)
	returned("given up", call(), true)
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
		if floor := redialPause(i, session) / 2; gap < floor {
			t.Fatalf("dial %d came %v after the one before, under its pause's floor %v (a busy loop): %v", i, gap, floor, gaps)
		}
	}
	slices.Sort(gaps)
	if median := gaps[len(gaps)/2]; median > 250*time.Millisecond {
		t.Fatalf("median gap between redials %v, want the paced tens of milliseconds (go-zookeeper's was a second)", median)
	}
}
