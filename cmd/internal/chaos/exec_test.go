package chaos

import (
	"testing"
)

func TestParseBeat(t *testing.T) {
	tests := []struct {
		name string
		node string
		want beat
		ok   bool
	}{
		{"background writer", "t4294967662-bg-946-940-0000000012", beat{token: 4294967662, role: "bg", pid: 946, pgrp: 940, seq: 12}, true},
		{"nested writer", "t8589935058-nested-1550-1548-0000000100", beat{token: 8589935058, role: "nested", pid: 1550, pgrp: 1548, seq: 100}, true},
		{"next holder's marker", "h4294967713-0000000040", beat{}, false},
		{"exit marker", "x-0000000041", beat{}, false},
		{"token not a number", "tX-bg-1-1-0000000001", beat{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseBeat(tt.node)
			if ok != tt.ok || (ok && got != tt.want) {
				t.Fatalf("parseBeat(%q) = %+v, %v; want %+v, %v", tt.node, got, ok, tt.want, tt.ok)
			}
		})
	}
}
