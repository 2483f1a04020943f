package locking

import (
	"fmt"
	"reflect"
	"testing"
)

func TestSequence(t *testing.T) {
	tests := []struct {
		name, child, lock string
		seq               int32
		ok                bool
	}{
		{"plain", "lock-0000000001", "lock-", 1, true},
		{"protected", "_c_37b3ce00-bf16-4fa6-8519-db89479745b6-lock-0000000042", "lock-", 42, true},
		{"max int32", "_c_x-lock-2147483647", "lock-", 2147483647, true},
		{"wrapped negative", "_c_x-lock--2147483648", "lock-", -2147483648, true},
		{"wrapped -1", "_c_x-lock--0000000001", "lock-", -1, true},
		{"last occurrence wins", "lock-x-lock-0000000007", "lock-", 7, true},
		{"foreign child", "config", "lock-", 0, false},
		{"foreign read node", "_c_x-__READ__0000000003", "lock-", 0, false},
		{"no digits", "_c_x-lock-", "lock-", 0, false},
		{"not a number", "_c_x-lock-12ab", "lock-", 0, false},
		{"explicit plus", "_c_x-lock-+12", "lock-", 0, false},
		{"overflow", "_c_x-lock-2147483648", "lock-", 0, false},
		{"read lock", "_c_u-__READ__0000000010", "__READ__", 10, true},
		{"empty lock name", "lock-1", "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq, ok := Sequence(tt.child, tt.lock)
			if seq != tt.seq || ok != tt.ok {
				t.Fatalf("Sequence(%q, %q) = %d, %v; want %d, %v", tt.child, tt.lock, seq, ok, tt.seq, tt.ok)
			}
		})
	}
}

func TestBeforeWrapAware(t *testing.T) {
	tests := []struct {
		a, b int32
		want bool
	}{
		{1, 2, true},
		{2, 1, false},
		{5, 5, false},
		{2147483646, 2147483647, true},
		{2147483647, -2147483648, true}, // the wrap: the negative one is newer
		{-2147483648, 2147483647, false},
		{2147483600, -2147483600, true},
		{-1, 0, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d<%d", tt.a, tt.b), func(t *testing.T) {
			if got := Before(tt.a, tt.b); got != tt.want {
				t.Fatalf("Before(%d, %d) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

func TestSortChildren(t *testing.T) {
	seq := func(c string) (int32, bool) { return Sequence(c, "lock-") }
	tests := []struct {
		name     string
		children []string
		foreign  bool
		want     []string
	}{
		{
			name:     "numeric, not lexical, across protected prefixes",
			children: []string{"_c_b-lock-0000000003", "_c_a-lock-0000000010", "_c_c-lock-0000000001"},
			want:     []string{"_c_c-lock-0000000001", "_c_b-lock-0000000003", "_c_a-lock-0000000010"},
		},
		{
			name: "across the 2^31 wrap",
			children: []string{"_c_d-lock--2147483647", "_c_a-lock-2147483646", "_c_c-lock--2147483648",
				"_c_b-lock-2147483647"},
			want: []string{"_c_a-lock-2147483646", "_c_b-lock-2147483647", "_c_c-lock--2147483648",
				"_c_d-lock--2147483647"},
		},
		{
			name:     "foreign children are dropped",
			children: []string{"leader", "_c_a-lock-0000000002", "_c_x-__READ__0000000001", "lock-notanumber", "_c_b-lock-0000000001"},
			want:     []string{"_c_b-lock-0000000001", "_c_a-lock-0000000002"},
		},
		{
			name:     "empty",
			children: nil,
			want:     []string{},
		},
		{
			name:     "foreign children kept after the participants, in the given order (a layout's AllChildren)",
			children: []string{"leader", "_c_a-lock-0000000002", "_c_x-__READ__0000000001", "_c_b-lock-0000000001"},
			foreign:  true,
			want:     []string{"_c_b-lock-0000000001", "_c_a-lock-0000000002", "leader", "_c_x-__READ__0000000001"},
		},
		{
			name:     "only foreign children kept",
			children: []string{"b", "a"},
			foreign:  true,
			want:     []string{"b", "a"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			count := func(c string) (int32, bool) { calls++; return seq(c) }
			if got := sortChildren(tt.children, count, tt.foreign); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			if calls != len(tt.children) {
				t.Fatalf("Sequence called %d times for %d children, want once each", calls, len(tt.children))
			}
			if tt.foreign {
				return
			}
			if got := SortChildren(tt.children, seq); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// sortChildrenUpTo keeps the participants up to and including the given
// sequence, wrap-aware, and sorts only those.
func TestSortChildrenUpTo(t *testing.T) {
	seq := func(c string) (int32, bool) { return Sequence(c, "lock-") }
	tests := []struct {
		name     string
		children []string
		last     int32
		want     []string
	}{
		{
			name:     "nodes behind ours are left out",
			children: []string{"_c_d-lock-0000000004", "_c_b-lock-0000000002", "_c_e-lock-0000000005", "_c_a-lock-0000000001", "_c_c-lock-0000000003"},
			last:     3,
			want:     []string{"_c_a-lock-0000000001", "_c_b-lock-0000000002", "_c_c-lock-0000000003"},
		},
		{
			name:     "ours first",
			children: []string{"_c_b-lock-0000000009", "_c_a-lock-0000000007"},
			last:     7,
			want:     []string{"_c_a-lock-0000000007"},
		},
		{
			name:     "ours missing: only those ahead",
			children: []string{"_c_b-lock-0000000009", "_c_a-lock-0000000007"},
			last:     8,
			want:     []string{"_c_a-lock-0000000007"},
		},
		{
			name:     "across the 2^31 wrap",
			children: []string{"_c_d-lock--2147483647", "_c_a-lock-2147483646", "_c_c-lock--2147483648", "_c_b-lock-2147483647"},
			last:     -2147483648,
			want:     []string{"_c_a-lock-2147483646", "_c_b-lock-2147483647", "_c_c-lock--2147483648"},
		},
		{
			name:     "foreign children are dropped",
			children: []string{"leader", "_c_b-lock-0000000002", "_c_a-lock-0000000001"},
			last:     2,
			want:     []string{"_c_a-lock-0000000001", "_c_b-lock-0000000002"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sortChildrenUpTo(tt.children, seq, tt.last); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestStandardDriver(t *testing.T) {
	d := StandardDriver{LockName: "lock-"}
	sorted := []string{"a-lock-1", "b-lock-2", "c-lock-3", "d-lock-4"}
	tests := []struct {
		name    string
		own     string
		max     int
		want    Verdict
		wantErr bool
	}{
		{"first holds", "a-lock-1", 1, Verdict{Held: true}, false},
		{"second watches first, holds when it goes", "b-lock-2", 1, Verdict{Watch: "a-lock-1", HeldWhenGone: true}, false},
		{"third watches its predecessor only", "c-lock-3", 1, Verdict{Watch: "b-lock-2"}, false},
		{"semaphore: inside the max", "b-lock-2", 2, Verdict{Held: true}, false},
		{"semaphore: right behind the max", "c-lock-3", 2, Verdict{Watch: "a-lock-1", HeldWhenGone: true}, false},
		{"semaphore: further back", "d-lock-4", 2, Verdict{Watch: "b-lock-2"}, false},
		{"missing own node", "z-lock-9", 1, Verdict{}, true},
		{"zero max", "a-lock-1", 0, Verdict{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := d.GetsTheLock(Listing{Sorted: sorted, Own: tt.own, Limit: tt.max})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
