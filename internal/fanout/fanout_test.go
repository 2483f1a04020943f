package fanout

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestOrderedNeverDropped(t *testing.T) {
	var f Fanout[int]
	defer f.Close()
	got := make(chan int, 1000)
	cancel := f.Add(func(v int) { got <- v })
	defer cancel()
	for i := 0; i < 1000; i++ {
		f.Publish(i)
	}
	for i := 0; i < 1000; i++ {
		select {
		case v := <-got:
			if v != i {
				t.Fatalf("got %d, want %d", v, i)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("value %d not delivered", i)
		}
	}
}

func TestCloseDeliversQueuedThenStops(t *testing.T) {
	var f Fanout[string]
	release := make(chan struct{})
	got := make(chan string, 3)
	f.Add(func(s string) {
		<-release
		got <- s
	})
	f.Publish("a")
	f.Publish("b")
	close(release)
	// Close waits for the goroutine unless it is running the listener at
	// that moment (it may be Close's caller): then the goroutine delivers
	// what was queued before Close on its own. Either way both arrive, in
	// order, and nothing published after Close does.
	f.Close()
	for _, want := range []string{"a", "b"} {
		select {
		case v := <-got:
			if v != want {
				t.Fatalf("got %q, want %q", v, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%q never delivered after Close", want)
		}
	}
	f.Add(func(string) { t.Error("listener added after Close was called") })
	f.Publish("c")
	select {
	case v := <-got:
		t.Fatalf("%q delivered after Close", v)
	default:
	}
}

// A listener may close the fan-out it listens to (a client's Close called
// from a state listener): Close must not wait for the goroutine it runs on.
func TestCloseFromListener(t *testing.T) {
	var f Fanout[int]
	closed := make(chan struct{})
	f.Add(func(int) {
		f.Close()
		close(closed)
	})
	other := make(chan int, 2)
	f.Add(func(v int) { other <- v })
	f.Publish(1)
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close called from a listener did not return")
	}
	f.Close() // and a later Close returns too
	if v := <-other; v != 1 {
		t.Fatalf("other listener got %d", v)
	}
}
