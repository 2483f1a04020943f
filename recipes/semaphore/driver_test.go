package semaphore

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator/recipes/locking"
)

func TestV1Driver(t *testing.T) {
	sorted := []string{"_c_a-lock-0000000001", "_c_b-lock-0000000002", "_c_c-lock-0000000003", "_c_d-lock-0000000004"}
	probeErr := errors.New("connection loss")
	empty := func() (string, error) { return "", nil }
	tests := []struct {
		name      string
		children  []string // shown to Sequence first, as the loop does
		own       string
		max       int
		v2Node    func() (string, error) // what the V2 directories hold
		want      locking.Verdict
		wantErr   error
		wantProbe bool // the V2 directories are listed
	}{
		{"inside the max", sorted, "_c_b-lock-0000000002", 3, nil, locking.Verdict{Held: true}, nil, false},
		{"right behind the max", sorted, "_c_d-lock-0000000004", 3, nil,
			locking.Verdict{Watch: "_c_a-lock-0000000001", HeldWhenGone: true}, nil, false},
		{"further back watches max places ahead", sorted, "_c_d-lock-0000000004", 2, nil,
			locking.Verdict{Watch: "_c_b-lock-0000000002"}, nil, false},
		{"max 0 admits nobody, watches own node", sorted, "_c_a-lock-0000000001", 0, nil,
			locking.Verdict{Watch: "_c_a-lock-0000000001"}, nil, false},
		{"negative max admits nobody", sorted, "_c_b-lock-0000000002", -4, nil,
			locking.Verdict{Watch: "_c_b-lock-0000000002"}, nil, false},
		{"V2 lease node", append([]string{"leases", "locks"}, sorted...), "_c_a-lock-0000000001", 3,
			func() (string, error) { return "leases/_c_x-lease-0000000000", nil }, locking.Verdict{}, ErrLayoutMismatch, true},
		{"V2 gate node", append([]string{"locks"}, sorted...), "_c_a-lock-0000000001", 3,
			func() (string, error) { return "locks/_c_x-lock-0000000000", nil }, locking.Verdict{}, ErrLayoutMismatch, true},
		{"empty V2 directories are no V2 layout", append([]string{"leases", "locks"}, sorted...), "_c_a-lock-0000000001", 3,
			empty, locking.Verdict{Held: true}, nil, true},
		{"empty leases directory, waiting", append([]string{"leases"}, sorted...), "_c_d-lock-0000000004", 2,
			empty, locking.Verdict{Watch: "_c_b-lock-0000000002"}, nil, true},
		{"V2 directories unreadable", append([]string{"leases"}, sorted...), "_c_a-lock-0000000001", 3,
			func() (string, error) { return "", probeErr }, locking.Verdict{}, probeErr, true},
		{"foreign child is no clash", append([]string{"config"}, sorted...), "_c_a-lock-0000000001", 1, nil,
			locking.Verdict{Held: true}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probed := false
			d := &v1Driver{StandardDriver: locking.StandardDriver{LockName: lockName}, v2Node: func() (string, error) {
				probed = true
				if tt.v2Node == nil {
					t.Fatal("V2 directories listed, but the listing showed none")
				}
				return tt.v2Node()
			}}
			got := locking.SortChildren(tt.children, d.Sequence)
			v, err := d.GetsTheLock(got, tt.own, tt.max)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if v != tt.want {
				t.Fatalf("verdict %+v, want %+v", v, tt.want)
			}
			if probed != tt.wantProbe {
				t.Fatalf("V2 directories listed: %v, want %v", probed, tt.wantProbe)
			}
			// The next listing without the directories lists nothing.
			probed = false
			_ = locking.SortChildren(sorted, d.Sequence)
			if _, _ = d.GetsTheLock(sorted, tt.own, tt.max); probed {
				t.Fatal("V2 directories listed again for a listing without them")
			}
		})
	}
}

func TestParallelReturnsFirstErrorInOrder(t *testing.T) {
	e1, e2 := errors.New("one"), errors.New("two")
	tests := []struct {
		name string
		fns  []func() error
		want error
	}{
		{"single ok", []func() error{func() error { return nil }}, nil},
		{"single error", []func() error{func() error { return e1 }}, e1},
		{"all ok", []func() error{func() error { return nil }, func() error { return nil }}, nil},
		{"second fails", []func() error{func() error { return nil }, func() error { return e2 }}, e2},
		{"both fail: first wins", []func() error{func() error { return e1 }, func() error { return e2 }}, e1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parallel(tt.fns...); !errors.Is(got, tt.want) || (tt.want == nil && got != nil) {
				t.Fatalf("parallel = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestWakeRearms(t *testing.T) {
	w := newWake()
	first := w.channel()
	w.fire()
	select {
	case <-first:
	default:
		t.Fatal("fire did not close the channel taken before it")
	}
	second := w.channel()
	select {
	case <-second:
		t.Fatal("the channel taken after fire is closed already")
	default:
	}
	w.fire()
	<-second
}

// relay fires the wake at every change, from one goroutine that ends with
// done, and a reader that takes the wake's channel before the value never
// misses a change.
func TestRelay(t *testing.T) {
	var (
		mu      sync.Mutex
		value   int
		changed = make(chan struct{})
	)
	next := func() <-chan struct{} {
		mu.Lock()
		defer mu.Unlock()
		return changed
	}
	set := func(v int) {
		mu.Lock()
		defer mu.Unlock()
		value = v
		close(changed)
		changed = make(chan struct{})
	}
	get := func() int {
		mu.Lock()
		defer mu.Unlock()
		return value
	}
	w := newWake()
	done := make(chan struct{})
	finished := relay(w, next, done)
	for i := 1; i <= 100; i++ {
		ch := w.channel()
		seen := get()
		set(i)
		if seen == i {
			t.Fatalf("read %d before setting it", i)
		}
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("change to %d did not fire the wake", i)
		}
	}
	close(done)
	<-finished
}
