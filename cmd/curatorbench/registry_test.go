package main

import (
	"strings"
	"testing"

	"github.com/gocurator/curator/cmd/internal/bench"
)

func TestParseRegistryFlags(t *testing.T) {
	f, err := parseFlags([]string{"-registry-scale"})
	if err != nil {
		t.Fatal(err)
	}
	// The numbers are the defaults.
	want := bench.RegistrySettings{Instances: 10_000, Caches: 200, Procs: 4, Samples: 200, Registrars: 16, IdleSeconds: 5}
	if !f.registry.on || f.registry.s != want || f.registry.ensemble != 3 {
		t.Fatalf("-registry-scale: %+v", f.registry)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-registry-scale", "-registry-caches", "10", "-registry-procs", "4"}, "do not spread evenly"},
		{[]string{"-registry-scale", "-registry-instances", "0"}, "must be positive"},
		{[]string{"-registry-scale", "-zk", "127.0.0.1:2181"}, "no -zk"},
		{[]string{"-registry-scale", "-registry-ensemble", "0"}, "at least 1"},
	} {
		if _, err := parseFlags(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
	// Without -registry-scale its settings are not checked.
	if _, err := parseFlags([]string{"-registry-procs", "0"}); err != nil {
		t.Fatal(err)
	}
}
