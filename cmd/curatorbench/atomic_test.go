package main

import (
	"strings"
	"testing"

	"github.com/gocurator/curator/cmd/internal/bench"
)

func TestParseAtomicFlags(t *testing.T) {
	f, err := parseFlags([]string{"-atomic", "-atomic-increments", "50", "-atomic-rounds", "3"})
	if err != nil {
		t.Fatal(err)
	}
	want := bench.AtomicSettings{Clients: 8, Increments: 50, PerClient: 1, BarrierRounds: 3}
	if !f.atomic.on || f.atomic.s != want || f.opWindow != 0 {
		t.Fatalf("-atomic: %+v, op window %v", f.atomic, f.opWindow)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-atomic", "-watch"}, "-atomic is a run separate"},
		{[]string{"-atomic", "-discovery"}, "is a run separate"},
		{[]string{"-atomic", "-atomic-clients", "0"}, "must be positive"},
		{[]string{"-atomic", "-atomic-rounds", "-1"}, "must be positive"},
	} {
		if _, err := parseFlags(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
	// Without -atomic its settings are not checked.
	if _, err := parseFlags([]string{"-atomic-increments", "0"}); err != nil {
		t.Fatal(err)
	}
}
