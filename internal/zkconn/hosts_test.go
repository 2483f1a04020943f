package zkconn

import (
	"fmt"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/clock"
)

// until polls cond until it holds, failing t after d.
func until(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(time.Millisecond)
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
				if got := RedialPause(round, tt.timeout); got != want {
					t.Fatalf("round %d: pause %v, want %v", round, got, want)
				}
			}
			if got := RedialPause(1000, tt.timeout); got != tt.want[len(tt.want)-1] {
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

// PacedHosts on a fake clock: go-zookeeper never hears retryStart (its
// one-second sleep) while the connection is wanted; each round of the
// servers after the first waits its pause, a connection resets the pace,
// and once the connection is given up Next reports retryStart at once, so
// go-zookeeper's loop looks at its Close.
func TestPacedHostsNext(t *testing.T) {
	fake := clock.NewFake(time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC))
	inner := &TrackedHosts{}
	if err := inner.Init([]string{"zk1:2181"}); err != nil {
		t.Fatal(err)
	}
	gone := make(chan struct{})
	p := &PacedHosts{HostProvider: inner, Clock: fake, Gone: gone, Timeout: func() time.Duration { return 4 * time.Second }}
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
		n := waitFor(t, ch, what)
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
		until(t, testDeadline, what+": pause armed", func() bool {
			due = fake.Pending()
			return len(due) == 1
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
	until(t, testDeadline, "pause armed", func() bool { return len(fake.Pending()) == 1 })
	close(gone)
	returned("given up while pausing", ch, true)
	returned("given up", call(), true)
}

// The tracker's host provider goes round its servers, says when a round
// ends without a connection, and starts a new round on an update.
func TestTrackedHosts(t *testing.T) {
	h := &TrackedHosts{}
	if err := h.Init([]string{"a:1", "b:1", "c:1"}); err != nil {
		t.Fatal(err)
	}
	if h.Len() != 3 {
		t.Fatalf("Len() = %d", h.Len())
	}
	seen := map[string]bool{}
	for i := range 3 {
		s, retryStart := h.Next()
		if retryStart {
			t.Fatalf("Next %d: retryStart within the first round", i)
		}
		seen[s] = true
	}
	if len(seen) != 3 {
		t.Fatalf("one round gave %v", seen)
	}
	if _, retryStart := h.Next(); !retryStart {
		t.Fatal("no retryStart after a round without a connection")
	}
	h.Connected()
	h.Update([]string{"d:1", "e:1"})
	seen = map[string]bool{}
	for range 2 {
		s, retryStart := h.Next()
		if retryStart {
			t.Fatal("retryStart right after an update")
		}
		seen[s] = true
	}
	if !seen["d:1"] || !seen["e:1"] {
		t.Fatalf("after the update the round gave %v, want d:1 and e:1", seen)
	}
}
