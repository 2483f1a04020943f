package connstate_test

import (
	"fmt"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/retry"
)

func ExampleErrorPolicy() {
	for _, p := range []connstate.ErrorPolicy{connstate.StandardPolicy{}, connstate.SessionPolicy{}} {
		fmt.Printf("%T: Suspended ends holds: %v, Lost ends holds: %v\n",
			p, p.IsError(connstate.Suspended), p.IsError(connstate.Lost))
	}
	// Output:
	// connstate.StandardPolicy: Suspended ends holds: true, Lost ends holds: true
	// connstate.SessionPolicy: Suspended ends holds: false, Lost ends holds: true
}

func ExampleListeners() {
	l := connstate.NewListeners()
	got := make(chan connstate.State, 3)
	cancel := l.Add(func(s connstate.State) { got <- s })
	for _, s := range []connstate.State{connstate.Connected, connstate.Suspended, connstate.Reconnected} {
		l.Publish(s) // never blocks, never drops
	}
	for i := 0; i < 3; i++ {
		fmt.Println(<-got)
	}
	cancel()
	l.Close()
	// Output:
	// Connected
	// Suspended
	// Reconnected
}

// A listener that sees the first Suspended at once but not the flapping
// after it. Register b.Handle with framework.Client.Listen.
func ExampleCircuitBreaker() {
	got := make(chan connstate.State, 10)
	b := connstate.NewCircuitBreaker(func(s connstate.State) { got <- s }, retry.NTimes(3, 20*time.Millisecond))
	defer b.Close()
	b.Handle(connstate.Suspended) // forwarded; the circuit opens
	b.Handle(connstate.Reconnected)
	b.Handle(connstate.Suspended)
	b.Handle(connstate.Reconnected) // settles: reported once the circuit closes
	fmt.Println(<-got)
	fmt.Println(<-got)
	// Output:
	// Suspended
	// Reconnected
}
