package semaphore

import (
	"context"
	"errors"
	"testing"

	"github.com/gocurator/curator/recipes/locking"
)

func TestV1Driver(t *testing.T) {
	sorted := []string{"_c_a-lock-0000000001", "_c_b-lock-0000000002", "_c_c-lock-0000000003", "_c_d-lock-0000000004"}
	tests := []struct {
		name string
		own  string
		max  int
		want locking.Verdict
	}{
		{"inside the max", "_c_b-lock-0000000002", 3, locking.Verdict{Held: true}},
		{"right behind the max", "_c_d-lock-0000000004", 3, locking.Verdict{Watch: "_c_a-lock-0000000001", HeldWhenGone: true}},
		{"further back watches max places ahead", "_c_d-lock-0000000004", 2, locking.Verdict{Watch: "_c_b-lock-0000000002"}},
		{"max 0 admits nobody, watches own node", "_c_a-lock-0000000001", 0, locking.Verdict{Watch: "_c_a-lock-0000000001"}},
		{"negative max admits nobody", "_c_b-lock-0000000002", -4, locking.Verdict{Watch: "_c_b-lock-0000000002"}},
	}
	d := &v1Driver{StandardDriver: locking.StandardDriver{LockName: lockName}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := d.GetsTheLock(locking.Listing{Sorted: sorted, Own: tt.own, Limit: tt.max})
			if err != nil || v != tt.want {
				t.Fatalf("verdict %+v, %v; want %+v", v, err, tt.want)
			}
		})
	}
}

// A V1 attempt reads the V2 directories only when the listing that came
// with its create shows one, and refuses the path only when they hold a
// gate or lease node.
func TestV1RefusesV2Layout(t *testing.T) {
	nodes := []string{"_c_a-lock-0000000001", "_c_b-lock-0000000002"}
	probeErr := errors.New("connection loss")
	empty := func() (string, error) { return "", nil }
	tests := []struct {
		name      string
		listing   []string
		v2Node    func() (string, error) // what the V2 directories hold
		wantErr   error
		wantProbe bool // the V2 directories are listed
	}{
		{"no V2 directory", nodes, nil, nil, false},
		{"foreign child is no clash", append([]string{"config"}, nodes...), nil, nil, false},
		{"V2 lease node", append([]string{"leases", "locks"}, nodes...),
			func() (string, error) { return "leases/_c_x-lease-0000000000", nil }, ErrLayoutMismatch, true},
		{"V2 gate node", append([]string{"locks"}, nodes...),
			func() (string, error) { return "locks/_c_x-lock-0000000000", nil }, ErrLayoutMismatch, true},
		{"empty V2 directories are no V2 layout", append([]string{"leases", "locks"}, nodes...), empty, nil, true},
		{"V2 directories unreadable", append([]string{"leases"}, nodes...),
			func() (string, error) { return "", probeErr }, probeErr, true},
		{"no listing: look", nil, empty, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probed := false
			d := &v1Driver{v2Node: func(context.Context) (string, error) {
				probed = true
				if tt.v2Node == nil {
					t.Fatal("V2 directories listed, but the listing showed none")
				}
				return tt.v2Node()
			}}
			err := d.noV2(context.Background(), tt.listing)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if probed != tt.wantProbe {
				t.Fatalf("V2 directories listed: %v, want %v", probed, tt.wantProbe)
			}
		})
	}
}
