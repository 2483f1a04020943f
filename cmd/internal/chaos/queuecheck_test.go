package chaos

import (
	"strings"
	"testing"
)

func TestJudgeQueue(t *testing.T) {
	m := func(name, data string) marker { return marker{name: name, data: data} }
	tests := []struct {
		name                             string
		put                              map[string]bool
		markers                          map[string][]marker
		consumed, byProcess, twice, lost int
		violations                       []string // a substring of each violation, in order
	}{
		{
			name:      "each acknowledged put once",
			put:       map[string]bool{"standard-q0": true, "standard-q1": true},
			markers:   map[string][]marker{"standard-q0": {m("standard-q0-0000000000", "c0 queue-0000000000")}, "standard-q1": {m("standard-q1-0000000001", "process-p3 queue-0000000001")}},
			consumed:  2,
			byProcess: 1,
		},
		{
			name:       "consumed twice",
			put:        map[string]bool{"standard-q0": true},
			markers:    map[string][]marker{"standard-q0": {m("standard-q0-0000000000", "c0 queue-0000000000"), m("standard-q0-0000000001", "c1 queue-0000000000")}},
			consumed:   1,
			twice:      1,
			violations: []string{"consumed 2 times"},
		},
		{
			name:       "acknowledged put lost",
			put:        map[string]bool{"standard-q0": true, "standard-q1": true},
			markers:    map[string][]marker{"standard-q1": {m("standard-q1-0000000000", "c0 queue-0000000001")}},
			consumed:   1,
			lost:       1,
			violations: []string{"acknowledged put standard-q0 never consumed"},
		},
		{
			name:     "a failed put may be consumed once or not at all",
			put:      map[string]bool{"standard-q0": false, "standard-q1": false},
			markers:  map[string][]marker{"standard-q1": {m("standard-q1-0000000000", "c0 queue-0000000001")}},
			consumed: 1,
		},
		{
			name:       "a failed put consumed twice",
			put:        map[string]bool{"standard-q0": false},
			markers:    map[string][]marker{"standard-q0": {m("standard-q0-0000000000", "c0 a"), m("standard-q0-0000000001", "c1 b")}},
			consumed:   1,
			twice:      1,
			violations: []string{"consumed 2 times"},
		},
		{
			name:       "marker of an id never put",
			put:        map[string]bool{},
			markers:    map[string][]marker{"standard-q9": {m("standard-q9-0000000000", "c0 queue-0000000009")}},
			consumed:   1,
			violations: []string{"never put"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := judgeQueue(WorkloadStandard, tt.put, tt.markers, 0)
			if j.consumed != tt.consumed || j.byProcess != tt.byProcess || j.twice != tt.twice || j.lost != tt.lost {
				t.Errorf("consumed %d by process %d twice %d lost %d, want %d %d %d %d",
					j.consumed, j.byProcess, j.twice, j.lost, tt.consumed, tt.byProcess, tt.twice, tt.lost)
			}
			checkViolations(t, j.vs, ViolationQueue, tt.violations)
		})
	}
}

func TestJudgeSimple(t *testing.T) {
	tests := []struct {
		name               string
		offered            map[string]bool
		taken              map[string]int
		nTaken, twice, los int
		violations         []string
	}{
		{name: "each once", offered: map[string]bool{"session-s0": true, "session-s1": false}, taken: map[string]int{"session-s0": 1, "session-s1": 1}, nTaken: 2},
		{name: "lost is allowed (at most once)", offered: map[string]bool{"session-s0": true, "session-s1": true}, taken: map[string]int{"session-s1": 1}, nTaken: 1, los: 1},
		{name: "taken twice", offered: map[string]bool{"session-s0": true}, taken: map[string]int{"session-s0": 2}, nTaken: 1, twice: 1, violations: []string{ViolationSimpleTwice + ": 2 times"}},
		{name: "never offered", offered: map[string]bool{}, taken: map[string]int{"session-s7": 1}, nTaken: 1, violations: []string{ViolationSimpleQueue + ": never offered"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := judgeSimple(WorkloadSession, tt.offered, tt.taken, 0)
			if j.taken != tt.nTaken || j.twice != tt.twice || j.lost != tt.los {
				t.Errorf("taken %d twice %d lost %d, want %d %d %d", j.taken, j.twice, j.lost, tt.nTaken, tt.twice, tt.los)
			}
			checkViolations(t, j.vs, "", tt.violations)
		})
	}
}

// checkViolations wants one violation per entry of want, of kind and
// containing the entry; with kind "", each entry is "<kind>: <text>".
func checkViolations(t *testing.T, vs []Violation, kind string, want []string) {
	t.Helper()
	if len(vs) != len(want) {
		t.Fatalf("violations %v, want %d", vs, len(want))
	}
	for i, v := range vs {
		k, text := kind, want[i]
		if k == "" {
			k, text, _ = strings.Cut(want[i], ": ")
		}
		if v.Kind != k || !strings.Contains(v.Detail, text) {
			t.Errorf("violation %d: %v, want a %s one with %q", i, v, k, text)
		}
	}
}

func TestMarkerNames(t *testing.T) {
	tests := []struct {
		name, in, id string
		ok           bool
	}{
		{name: "queue id", in: "standard-q42-0000000007", id: "standard-q42", ok: true},
		{name: "no sequence", in: "standard-q42", ok: false},
		{name: "short sequence", in: "standard-q42-07", ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, ok := markerID(tt.in)
			if id != tt.id || ok != tt.ok {
				t.Errorf("markerID(%q) = %q, %v; want %q, %v", tt.in, id, ok, tt.id, tt.ok)
			}
		})
	}
	for _, tt := range []struct {
		id, bucket string
		ok         bool
	}{
		{itemID(WorkloadSession, 'q', 0), "b0", true},
		{itemID(WorkloadSession, 'q', markerBucket*3+5), "b3", true},
		{"session-x", "", false},
	} {
		if b, ok := bucketOf(tt.id); b != tt.bucket || ok != tt.ok {
			t.Errorf("bucketOf(%q) = %q, %v; want %q, %v", tt.id, b, ok, tt.bucket, tt.ok)
		}
	}
}
