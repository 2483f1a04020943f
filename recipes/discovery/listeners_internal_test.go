package discovery

import (
	"testing"
	"time"
)

// The bound, counted: a blocked listener has one list waiting after any
// number of changes, a slow one gets the lists in order, close does not
// wait for a blocked listener, and its goroutine ends once released.
func TestLatestListenersBound(t *testing.T) {
	var l latestListeners
	gate, got := make(chan struct{}), make(chan int, 1000)
	l.add(func(list []Instance) { <-gate })
	l.add(func(list []Instance) { got <- len(list) })
	for k := 1; k <= 500; k++ {
		l.publish(make([]Instance, k))
		if p := l.pending(); p > 2 {
			t.Fatalf("%d lists waiting for 2 listeners after %d changes", p, k)
		}
	}
	last := 0
	for last != 500 {
		select {
		case n := <-got:
			if n <= last {
				t.Fatalf("list of %d after one of %d", n, last)
			}
			last = n
		case <-time.After(30 * time.Second):
			t.Fatalf("the slow listener never got the latest list (last %d)", last)
		}
	}
	done := make(chan struct{})
	go func() {
		l.close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("close waited for a blocked listener")
	}
	close(gate) // the blocked goroutine ends now (goleak checks)
	if cancel := l.add(func([]Instance) { t.Error("called after close") }); cancel == nil {
		t.Fatal("nil cancel")
	}
	l.publish(nil)
}
