package protname

import (
	"testing"

	"github.com/google/uuid"
)

func TestIs(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ok   bool
		rest string
	}{
		{"curator form", "_c_37b3ce00-bf16-4fa6-8519-db89479745b6-lock-0000000001", true, "lock-0000000001"},
		{"go-zookeeper form is not recognised", "_c_37b3ce00bf164fa68519db89479745b6-lock-0000000001", false, ""},
		{"too short", "_c_37b3ce00-bf16-4fa6-8519-db89479745b6-", false, ""},
		{"no prefix", "xx37b3ce00-bf16-4fa6-8519-db89479745b6-lock-1", false, ""},
		{"bad uuid", "_c_zzzzzzzz-bf16-4fa6-8519-db89479745b6-lock-1", false, ""},
		{"no dash after the uuid", "_c_37b3ce00-bf16-4fa6-8519-db89479745b6xlock-1", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Is(tt.in); got != tt.ok {
				t.Fatalf("Is = %v, want %v", got, tt.ok)
			}
			want := tt.in
			if tt.ok {
				want = tt.rest
			}
			if got := Strip(tt.in); got != want {
				t.Fatalf("Strip = %q, want %q", got, want)
			}
		})
	}
}

// NewPrefix makes a recognised prefix with a version 4 UUID, a new one
// each time.
func TestNewPrefix(t *testing.T) {
	p := NewPrefix()
	n := p + "lock-"
	if !Is(n+"0000000001") || len(p) != Overhead || n[39] != '-' || Strip(n+"1") != "lock-1" {
		t.Fatalf("NewPrefix made %q", p)
	}
	id, err := uuid.Parse(p[3:39])
	if err != nil || id.Version() != 4 || id.Variant() != uuid.RFC4122 || p == NewPrefix() {
		t.Fatalf("NewPrefix made %q: %v (or the same twice)", p, err)
	}
}
