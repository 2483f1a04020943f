package mailbox

import (
	"slices"
	"sync"
	"testing"
)

func TestMailbox(t *testing.T) {
	for _, tt := range []struct {
		name string
		send []int
	}{
		{"none", nil},
		{"one", []int{1}},
		{"several, in order", []int{1, 2, 3, 4}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := New[int]()
			for _, v := range tt.send {
				m.Send(v)
			}
			select {
			case <-m.Wake():
				if len(tt.send) == 0 {
					t.Fatal("woken with nothing sent")
				}
			default:
				if len(tt.send) > 0 {
					t.Fatal("not woken after a send")
				}
			}
			if got := m.Take(); !slices.Equal(got, tt.send) {
				t.Fatalf("Take = %v, want %v", got, tt.send)
			}
			if got := m.Take(); got != nil {
				t.Fatalf("second Take = %v", got)
			}
		})
	}
}

// Concurrent senders never block, and every value reaches the receiver,
// each sender's in its order.
func TestConcurrentSenders(t *testing.T) {
	const senders, each = 8, 1000
	m := New[[2]int]()
	var wg sync.WaitGroup
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				m.Send([2]int{s, i})
			}
		}()
	}
	next := make([]int, senders)
	got := 0
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for got < senders*each {
		select {
		case <-m.Wake():
		case <-done:
		}
		for _, v := range m.Take() {
			if v[1] != next[v[0]] {
				t.Fatalf("sender %d: %d after %d", v[0], v[1], next[v[0]]-1)
			}
			next[v[0]]++
			got++
		}
	}
}
