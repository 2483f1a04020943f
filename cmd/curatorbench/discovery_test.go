package main

import (
	"strings"
	"testing"

	"github.com/gocurator/curator/cmd/internal/bench"
)

func TestParseDiscoveryFlags(t *testing.T) {
	f, err := parseFlags([]string{"-discovery", "-discovery-churn", "50", "-discovery-workers", "2"})
	if err != nil {
		t.Fatal(err)
	}
	want := bench.DiscoverySettings{Instances: 8, Picks: 1_000_000, Churn: 50, Workers: 2}
	if !f.disc.on || f.disc.s != want || f.opWindow != 0 {
		t.Fatalf("-discovery: %+v, op window %v", f.disc, f.opWindow)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-discovery", "-watch"}, "-discovery is a run separate"},
		{[]string{"-discovery", "-scale"}, "-discovery is a run separate"},
		{[]string{"-discovery", "-discovery-picks", "0"}, "must be positive"},
		{[]string{"-discovery", "-discovery-workers", "-1"}, "must be positive"},
	} {
		if _, err := parseFlags(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
	// Without -discovery its settings are not checked.
	if _, err := parseFlags([]string{"-discovery-picks", "0"}); err != nil {
		t.Fatal(err)
	}
}
