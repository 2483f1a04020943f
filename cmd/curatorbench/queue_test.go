package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/gocurator/curator/cmd/internal/bench"
)

func TestParseQueueFlags(t *testing.T) {
	f, err := parseFlags([]string{"-queue", "-queue-items", "50", "-queue-rate", "200"})
	if err != nil {
		t.Fatal(err)
	}
	want := bench.QueueSettings{Producers: 4, Consumers: 4, Items: 50, Rate: 200}
	if !f.queue.on || f.queue.s != want || !slices.Equal(f.queue.modes, bench.QueueModes) || f.opWindow != 0 {
		t.Fatalf("-queue: %+v, op window %v", f.queue, f.opWindow)
	}
	if f, err = parseFlags([]string{"-queue", "-queue-modes", "simple,queue-lock"}); err != nil ||
		!slices.Equal(f.queue.modes, []string{bench.QueueSimple, bench.QueueLocked}) {
		t.Fatalf("-queue-modes: %v, %v", f.queue.modes, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-queue", "-atomic"}, "is a run separate"},
		{[]string{"-queue", "-watch"}, "-queue is a run separate"},
		{[]string{"-queue", "-queue-consumers", "0"}, "must be positive"},
		{[]string{"-queue", "-queue-rate", "-5"}, "must be positive"},
		{[]string{"-queue", "-queue-modes", "queue,fifo"}, `queue mode "fifo"`},
	} {
		if _, err := parseFlags(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
	// Without -queue its settings are not checked.
	if _, err := parseFlags([]string{"-queue-items", "0"}); err != nil {
		t.Fatal(err)
	}
}
