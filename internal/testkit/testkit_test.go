package testkit

import (
	"reflect"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestUniqueNames(t *testing.T) {
	a, b := Unique(t), Unique(t)
	if a == b || !strings.Contains(a, "TestUniqueNames") || strings.Contains(a, "/") {
		t.Fatalf("Unique gave %q and %q", a, b)
	}
}

func TestWaitClosedAndEventually(t *testing.T) {
	ch := make(chan struct{})
	close(ch)
	WaitClosed(t, ch, "a closed channel")
	n := 0
	Eventually(t, "the third poll", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Fatalf("polled %d times", n)
	}
}

func TestParseWchc(t *testing.T) {
	tests := []struct {
		name string
		out  string
		want map[int64][]string
	}{
		{"none", "", map[int64][]string{}},
		{"two sessions", "0x1000a\n\t/ns/a\n\t/ns/b\n0x2000b\n\t/c\n\n", map[int64][]string{0x1000a: {"/ns/a", "/ns/b"}, 0x2000b: {"/c"}}},
		{"CRLF", "0x1\r\n\t/a\r\n", map[int64][]string{1: {"/a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseWchc(tt.out); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("parseWchc(%q) = %v, want %v", tt.out, got, tt.want)
			}
		})
	}
}
