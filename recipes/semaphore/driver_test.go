package semaphore

import (
	"errors"
	"testing"

	"github.com/gocurator/curator/recipes/locking"
)

func TestV1Driver(t *testing.T) {
	sorted := []string{"_c_a-lock-0000000001", "_c_b-lock-0000000002", "_c_c-lock-0000000003", "_c_d-lock-0000000004"}
	tests := []struct {
		name     string
		children []string // shown to Sequence first, as the loop does
		own      string
		max      int
		want     locking.Verdict
		wantErr  error
	}{
		{"inside the max", sorted, "_c_b-lock-0000000002", 3, locking.Verdict{Held: true}, nil},
		{"right behind the max", sorted, "_c_d-lock-0000000004", 3,
			locking.Verdict{Watch: "_c_a-lock-0000000001", HeldWhenGone: true}, nil},
		{"further back watches max places ahead", sorted, "_c_d-lock-0000000004", 2,
			locking.Verdict{Watch: "_c_b-lock-0000000002"}, nil},
		{"max 0 admits nobody, watches own node", sorted, "_c_a-lock-0000000001", 0,
			locking.Verdict{Watch: "_c_a-lock-0000000001"}, nil},
		{"negative max admits nobody", sorted, "_c_b-lock-0000000002", -4,
			locking.Verdict{Watch: "_c_b-lock-0000000002"}, nil},
		{"V2 leases dir", append([]string{"leases"}, sorted...), "_c_a-lock-0000000001", 3,
			locking.Verdict{}, ErrLayoutMismatch},
		{"V2 locks dir", append([]string{"locks"}, sorted...), "_c_a-lock-0000000001", 3,
			locking.Verdict{}, ErrLayoutMismatch},
		{"foreign child is no clash", append([]string{"config"}, sorted...), "_c_a-lock-0000000001", 1,
			locking.Verdict{Held: true}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &v1Driver{StandardDriver: locking.StandardDriver{LockName: lockName}}
			got := locking.SortChildren(tt.children, d.Sequence)
			v, err := d.GetsTheLock(got, tt.own, tt.max)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if v != tt.want {
				t.Fatalf("verdict %+v, want %+v", v, tt.want)
			}
		})
	}
}

func TestContains(t *testing.T) {
	tests := []struct {
		list []string
		s    string
		want bool
	}{
		{nil, "a", false},
		{[]string{"a", "b"}, "b", true},
		{[]string{"a", "b"}, "c", false},
	}
	for _, tt := range tests {
		if got := contains(tt.list, tt.s); got != tt.want {
			t.Fatalf("contains(%v, %q) = %v", tt.list, tt.s, got)
		}
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

func TestEither(t *testing.T) {
	closedCh := make(chan struct{})
	close(closedCh)
	tests := []struct {
		name       string
		a, b, done <-chan struct{}
		wantClosed bool
	}{
		{"b nil returns a (closed)", closedCh, nil, nil, true},
		{"b nil returns a (open)", make(chan struct{}), nil, nil, false},
		{"a closed", closedCh, make(chan struct{}), make(chan struct{}), true},
		{"b closed", make(chan struct{}), closedCh, make(chan struct{}), true},
		{"done ends the wait, unclosed", make(chan struct{}), make(chan struct{}), closedCh, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := either(tt.a, tt.b, tt.done)
			if tt.wantClosed {
				<-out // the test's deadline bounds this
				return
			}
			select {
			case <-out:
				t.Fatal("closed, want open")
			default:
			}
		})
	}
}
