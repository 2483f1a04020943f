package framework

import (
	"errors"
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/zktest"
)

// Two flaps of the connection reach a listener of a client made
// WithCircuitBreaking as one Suspended and one Reconnected, while a client
// without it, behind the same proxy, sees all four states.
func TestCircuitBreakingDampsFlapping(t *testing.T) {
	proxy := zktest.NewProxy(t, server(t).Addr())
	ns := newNamespace(t)
	damped := connect(t, proxy.Addr(), WithNamespace(ns), WithCircuitBreaking(retry.UntilElapsed(time.Minute, 3*time.Second)))
	raw := connect(t, proxy.Addr(), WithNamespace(ns))
	got := record(damped)
	defer got.cancel()
	all := record(raw)
	defer all.cancel()

	for range 2 {
		proxy.Cut()
		all.expect(t, testTimeout, connstate.Suspended)
		proxy.Restore()
		all.expect(t, testTimeout, connstate.Reconnected)
	}
	got.expect(t, testTimeout, connstate.Suspended, connstate.Reconnected)
	// Delivery is ordered, and the breaker let Reconnected through only
	// after both flaps: nothing else was forwarded.
	select {
	case s := <-got.ch:
		t.Fatalf("damped listener got %v after Reconnected", s)
	default:
	}
	if damped.State() != connstate.Reconnected {
		t.Fatalf("State() = %v: the client's own state is not damped", damped.State())
	}
}

func TestCircuitBreakingBadInput(t *testing.T) {
	ctx := testCtx(t)
	for _, p := range []retry.Policy{nil, retry.NTimes(-1, time.Second)} {
		if _, err := Connect(ctx, server(t).ConnectString(), WithCircuitBreaking(p)); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("WithCircuitBreaking(%v): %v, want ErrInvalidOption", p, err)
		}
	}
}
