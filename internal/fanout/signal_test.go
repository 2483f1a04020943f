package fanout

import "testing"

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestSignal(t *testing.T) {
	var s Signal
	a := s.C()
	if closed(a) || s.C() != a {
		t.Fatal("a fresh signal's channel is closed, or C changed without Notify")
	}
	s.Notify()
	if !closed(a) {
		t.Fatal("Notify left the channel open")
	}
	b := s.C()
	if closed(b) || b == a {
		t.Fatal("after Notify, C did not give a new open channel")
	}
	s.Notify()
	s.Notify() // nobody waits: no channel made
	c := s.C()
	if closed(c) {
		t.Fatal("a channel taken after the last Notify is closed")
	}
	s.Close()
	if !closed(c) || !closed(s.C()) {
		t.Fatal("Close left a channel open")
	}
	s.Notify() // after Close: nothing
	var z Signal
	z.Close()
	if !closed(z.C()) {
		t.Fatal("C after Close on a fresh signal is open")
	}
}

func TestClosed(t *testing.T) {
	select {
	case <-Closed():
	default:
		t.Fatal("Closed() is not closed")
	}
	if first, second := Closed(), Closed(); first != second {
		t.Fatal("Closed() makes a channel per call")
	}
}
