package connstate

import (
	"testing"
	"time"
)

// recorder collects states and signals each one.
type recorder struct {
	got chan State
}

func newRecorder() *recorder   { return &recorder{got: make(chan State, 1000)} }
func (r *recorder) fn(s State) { r.got <- s }
func (r *recorder) next(t *testing.T) State {
	t.Helper()
	select {
	case s := <-r.got:
		return s
	case <-time.After(5 * time.Second):
		t.Fatal("no state delivered")
		return 0
	}
}

func TestListenersDeliverInOrderWithoutDropping(t *testing.T) {
	l := NewListeners()
	defer l.Close()
	r := newRecorder()
	cancel := l.Add(r.fn)
	defer cancel()
	seq := []State{Connected, Suspended, Reconnected, Suspended, Lost, Reconnected}
	const rounds = 100 // far more than go-zookeeper's 6-event channel holds
	for i := 0; i < rounds; i++ {
		for _, s := range seq {
			l.Publish(s)
		}
	}
	for i := 0; i < rounds; i++ {
		for j, want := range seq {
			if got := r.next(t); got != want {
				t.Fatalf("round %d item %d: got %v, want %v", i, j, got, want)
			}
		}
	}
}

func TestSlowListenerBlocksNobody(t *testing.T) {
	l := NewListeners()
	defer l.Close()
	release := make(chan struct{})
	slowGot := newRecorder()
	cancelSlow := l.Add(func(s State) {
		<-release
		slowGot.fn(s)
	})
	defer cancelSlow()
	fast := newRecorder()
	cancelFast := l.Add(fast.fn)
	defer cancelFast()

	published := make(chan struct{})
	go func() {
		for i := 0; i < 50; i++ {
			l.Publish(Suspended)
			l.Publish(Reconnected)
		}
		close(published)
	}()
	select {
	case <-published:
	case <-time.After(5 * time.Second):
		t.Fatal("Publish blocked behind a slow listener")
	}
	for i := 0; i < 100; i++ {
		fast.next(t)
	}
	close(release)
	for i := 0; i < 100; i++ {
		slowGot.next(t)
	}
}

func TestCancelStopsDelivery(t *testing.T) {
	l := NewListeners()
	defer l.Close()
	r := newRecorder()
	cancel := l.Add(r.fn)
	l.Publish(Connected)
	if got := r.next(t); got != Connected {
		t.Fatalf("got %v", got)
	}
	cancel()
	cancel() // idempotent
	l.Publish(Lost)
	other := newRecorder()
	cancelOther := l.Add(other.fn)
	defer cancelOther()
	l.Publish(Reconnected)
	if got := other.next(t); got != Reconnected {
		t.Fatalf("other got %v", got)
	}
	select {
	case s := <-r.got:
		t.Fatalf("cancelled listener got %v", s)
	default:
	}
}

func TestCancelFromInsideListener(t *testing.T) {
	l := NewListeners()
	defer l.Close()
	done := make(chan struct{})
	var cancel func()
	ready := make(chan struct{})
	cancel = l.Add(func(State) {
		<-ready
		cancel()
		close(done)
	})
	close(ready)
	l.Publish(Suspended)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("cancel from inside the listener deadlocked")
	}
}

func TestAddAfterCloseIsNoop(t *testing.T) {
	l := NewListeners()
	l.Close()
	called := make(chan struct{}, 1)
	cancel := l.Add(func(State) { called <- struct{}{} })
	l.Publish(Connected)
	cancel()
	select {
	case <-called:
		t.Fatal("listener added after Close was called")
	default:
	}
	if got := l.Add(nil); got == nil {
		t.Fatal("Add(nil) returned a nil cancel")
	}
}
