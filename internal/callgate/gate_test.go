package callgate

import (
	"testing"
	"time"
)

func TestGate(t *testing.T) {
	for _, tt := range []struct {
		name     string
		inFlight int           // calls entered and not left before Drain
		leave    bool          // they leave while Drain waits
		wait     time.Duration // Drain's bound
		want     bool
	}{
		{"idle drains at once", 0, false, time.Hour, true},
		{"calls in flight return", 3, true, time.Minute, true},
		{"a call that never returns", 1, false, 10 * time.Millisecond, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var g Gate
			for range tt.inFlight {
				if !g.Enter() {
					t.Fatal("an open gate refused a call")
				}
			}
			left := make(chan struct{})
			if tt.leave {
				go func() {
					defer close(left)
					for range tt.inFlight {
						g.Leave()
					}
				}()
			} else {
				close(left)
			}
			if got := g.Drain(tt.wait); got != tt.want {
				t.Fatalf("Drain = %v, want %v", got, tt.want)
			}
			<-left
			if g.Enter() {
				t.Fatal("a drained gate admitted a call")
			}
		})
	}
}

func TestClosed(t *testing.T) {
	if Closed().Enter() {
		t.Fatal("the closed gate admitted a call")
	}
}
