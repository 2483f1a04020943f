package semaphore

import (
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
	d := v1Driver{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := d.GetsTheLock(locking.Listing{Sorted: sorted, Own: tt.own, Limit: tt.max})
			if err != nil || v != tt.want {
				t.Fatalf("verdict %+v, %v; want %+v", v, err, tt.want)
			}
		})
	}
}

// A V1 attempt refuses a leases/ directory holding anything but V1
// traces: every child there is a lease to a V2 semaphore.
func TestV1RefusesV2Leases(t *testing.T) {
	tests := []struct {
		name   string
		leases []string
		want   string // the child that refuses, "" for none
	}{
		{"empty", nil, ""},
		{"traces only", []string{"_c_a-v1-participant-0000000001", "_c_b-v1-participant-0000000002"}, ""},
		{"Curator's lease", []string{"_c_a-v1-participant-0000000001", "_c_x-lease-0000000003"}, "_c_x-lease-0000000003"},
		{"a foreign child counts for V2", []string{"config"}, "config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := v2Lease(tt.leases)
			if got != tt.want || ok != (tt.want != "") {
				t.Fatalf("v2Lease = %q, %v; want %q", got, ok, tt.want)
			}
		})
	}
}
