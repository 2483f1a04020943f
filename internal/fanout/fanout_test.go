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
	var got []string
	f.Add(func(s string) {
		<-release
		got = append(got, s)
	})
	f.Publish("a")
	f.Publish("b")
	close(release)
	f.Close() // waits for the listener goroutine
	if len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("got %v", got)
	}
	f.Add(func(string) { t.Error("listener added after Close was called") })
	f.Publish("c")
}
