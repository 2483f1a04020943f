package framework

import (
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/internal/clock"
	"github.com/gocurator/curator/zktest"
)

// The client-side expiry deadline counts from the send of the last answered
// request, never from when the client noticed the silence, and keeps a tenth
// of the timeout as margin whatever percentage is asked for.
func TestSessionDeadline(t *testing.T) {
	ack := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		timeout time.Duration
		pct     int
		want    time.Duration // after ack
	}{
		{"default", 3 * time.Second, maxExpiryPercent, 2700 * time.Millisecond},
		{"asked 100 keeps the margin", 3 * time.Second, 100, 2700 * time.Millisecond},
		{"lower percent", 10 * time.Second, 50, 5 * time.Second},
		{"one percent", 10 * time.Second, 1, 100 * time.Millisecond},
		{"long session", 60 * time.Second, 90, 54 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sessionDeadline(ack.Add(time.Hour), ack, tt.timeout, tt.pct).Sub(ack)
			if got != tt.want {
				t.Fatalf("deadline %v after the acknowledged send, want %v", got, tt.want)
			}
			if got >= tt.timeout {
				t.Fatalf("deadline %v not before the server's earliest expiry %v", got, tt.timeout)
			}
		})
	}
	// Nothing answered yet: counted from now.
	now := ack.Add(time.Minute)
	if got := sessionDeadline(now, time.Time{}, time.Second, 90).Sub(now); got != 900*time.Millisecond {
		t.Fatalf("deadline with no acknowledgement %v from now, want 900ms", got)
	}
}

// withClock makes the client time its expiry on clk.
func withClock(clk clock.Clock) Option {
	return func(o *options) error { o.clock = clk; return nil }
}

// withoutKeepalive turns the keepalive's pings off: a test of the watchdog
// alone decides what is sent and when.
func withoutKeepalive() Option {
	return func(o *options) error { o.noKeepalive = true; return nil }
}

// The watchdog on the client's clock, against a real server: while the
// client is partitioned, Lost falls due expiryPercent of the negotiated
// timeout after the send of the last answered request, not a moment
// before, whenever the client noticed the partition (pitfall 5). The fake
// clock moves only here, and fires the watchdog inside Advance, so "not
// yet" is a fact rather than a wait. TestConnectionStates covers the same
// on the wall clock.
func TestClientSideExpiryOnClock(t *testing.T) {
	srv := server(t)
	ns := newNamespace(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	fake := clock.NewFake(time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC))
	start := fake.Now()
	// A short session: go-zookeeper notices the black hole below after
	// two thirds of it, in real time.
	// Without the keepalive, whose pings (and timer) would move the
	// acknowledgement this test places by hand: TestKeepaliveOnClock
	// runs it on the same fake clock.
	c := connect(t, proxy.Addr(), WithNamespace(ns), WithSessionTimeout(2*time.Second), withClock(fake), withoutKeepalive())
	ctx := testCtx(t)
	timeout := c.SessionTimeout()
	states := record(c)
	defer states.cancel()
	first := c.SessionID()
	acked := func() time.Time {
		c.mu.Lock()
		w := c.h.wire
		c.mu.Unlock()
		return w.Acked()
	}

	// Every send so far was at start. Steps while connected stay short of
	// the deadline: on the fake clock, time passing without a send is
	// silence.
	step := timeout / 2
	if n := fake.Advance(step); n != 0 {
		t.Fatalf("%d timers ran half a timeout after the connect, want none", n)
	}
	ack := fake.Now()
	if _, err := c.Exists(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	// Nothing was sent after ack on the fake clock: pings sent before it
	// were sent at start.
	if got := acked(); !got.Equal(ack) {
		t.Fatalf("acknowledged send at %v, want the Exists' at %v", got.Sub(start), ack.Sub(start))
	}
	// Silently partitioned; pings sent from now on are never answered.
	proxy.BlackHole()
	if n := fake.Advance(step / 2); n != 0 {
		t.Fatalf("%d timers ran before the deadline, want none", n)
	}
	states.expect(t, testTimeout, connstate.Suspended)
	// handle re-arms the watchdog under c.mu in the same call as it
	// reports Suspended: once State returns, it is armed.
	if s := c.State(); s != connstate.Suspended {
		t.Fatalf("State() = %v, want Suspended", s)
	}
	deadline := ack.Add(timeout * maxExpiryPercent / 100)
	if p := fake.Pending(); len(p) != 1 || !p[0].Equal(deadline) {
		t.Fatalf("watchdog armed for %v (after start), want the acknowledged send + 90%% of %v, %v", p, timeout, deadline.Sub(start))
	}
	if n := fake.Advance(deadline.Sub(fake.Now()) - time.Millisecond); n != 0 {
		t.Fatalf("%d timers ran a millisecond before the deadline", n)
	}
	if s := c.State(); s != connstate.Suspended {
		t.Fatalf("State() = %v a millisecond before the deadline, want Suspended", s)
	}
	if n := fake.Advance(time.Millisecond); n != 1 {
		t.Fatalf("%d timers ran at the deadline, want the watchdog", n)
	}
	states.expect(t, testTimeout, connstate.Lost)
	if c.SessionID() != 0 {
		t.Fatalf("SessionID() = %#x after Lost, want 0", c.SessionID())
	}
	proxy.Restore()
	states.expect(t, testTimeout, connstate.Reconnected)
	if second := c.SessionID(); second == 0 || second == first {
		t.Fatalf("session after Lost = %#x, want a new one (old %#x)", second, first)
	}
}
