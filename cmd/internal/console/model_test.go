package console

import (
	"fmt"
	"testing"
	"time"

	"github.com/gocurator/curator/cmd/internal/inspect"
)

// lockDir is a loaded lock directory with ephemeral lock nodes of the
// given owners, in sequence order.
func lockDir(owners ...int64) *inspect.Znode {
	z := &inspect.Znode{Name: "orders", Loaded: true, NumChildren: int32(len(owners))}
	for i, o := range owners {
		z.Children = append(z.Children, &inspect.Znode{
			Name:  fmt.Sprintf("_c_%08x-0000-4000-8000-000000000000-lock-%010d", i, i),
			Data:  []byte("10.0.0.1"),
			Czxid: int64(100 + i), Ctime: time.Unix(1_700_000_000+int64(i), 0), Owner: o,
		})
	}
	return z
}

// TestWarnings: a holder whose session no server lists is a
// holder-session-gone warning, a waiter's an orphan-node one, a queue
// rising at each change a queue-growing one; with the servers' answer
// incomplete nothing can be said of sessions, and nothing is.
func TestWarnings(t *testing.T) {
	gone := &inspect.Sessions{Complete: true} // every server answered, none lists 1 or 2
	unknown := &inspect.Sessions{Complete: false}
	tests := []struct {
		name     string
		z        *inspect.Znode
		sessions *inspect.Sessions
		depths   []int
		want     []string
	}{
		{"holder and waiter gone", lockDir(1, 2), gone, nil, []string{WarnHolderGone, WarnOrphanNode}},
		{"sessions unknown", lockDir(1, 2), unknown, nil, nil},
		{"queue growing", queueDir(3), unknown, []int{1, 2, 3}, []string{WarnGrowing}},
		{"queue up and down", queueDir(3), unknown, []int{1, 4, 3}, nil},
		{"queue too new to say", queueDir(3), unknown, []int{2, 3}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, ok := classify("/x", tc.z, nil)
			if !ok {
				t.Fatalf("%s: not a recipe", tc.name)
			}
			m := newModel("/", nil, nil)
			m.sessions = tc.sessions
			m.depths["/x"] = tc.depths
			r := m.summaryLocked("/x", e, time.Now())
			var got []string
			for _, w := range r.Warnings {
				got = append(got, w.Kind)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("warnings %v (%+v), want %v", got, r.Warnings, tc.want)
			}
		})
	}
}

func queueDir(n int) *inspect.Znode {
	z := &inspect.Znode{Name: "q", Loaded: true}
	for i := 0; i < n; i++ {
		z.Children = append(z.Children, &inspect.Znode{Name: fmt.Sprintf("queue-%010d", i), Loaded: true})
	}
	return z
}

// TestClassifySkipsASemaphoresOwnDirectories: a V2 semaphore's locks/
// gate holds lock nodes, but is the semaphore's, not a mutex of its own.
func TestClassifySkipsASemaphoresOwnDirectories(t *testing.T) {
	gate := lockDir(1)
	gate.Name = "locks"
	sem := &inspect.Znode{Name: "sem", Loaded: true, Children: []*inspect.Znode{gate, {Name: "leases", Loaded: true, Cversion: 1}}}
	if _, ok := classify("/sem/locks", gate, sem); ok {
		t.Error("the gate was taken for a recipe of its own")
	}
	if e, ok := classify("/sem", sem, nil); !ok || e.layout.Kind != inspect.KindSemaphoreV2 {
		t.Errorf("the semaphore: %v %q", ok, e.layout.Kind)
	}
	if _, ok := classify("/other/locks", gate, &inspect.Znode{Name: "other", Loaded: true, Children: []*inspect.Znode{gate}}); !ok {
		t.Error("a mutex at a path named locks was not recognised")
	}
}

func TestLoopbackAndHref(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want bool
		err  bool
	}{
		{"127.0.0.1:8080", true, false},
		{"[::1]:8080", true, false},
		{"localhost:0", true, false},
		{"0.0.0.0:8080", false, false},
		{":8080", false, false},
		{"10.1.2.3:8080", false, false},
		{"8080", false, true},
	} {
		got, err := IsLoopback(tc.addr)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("IsLoopback(%q) = %v, %v", tc.addr, got, err)
		}
	}
	if got := recipeHref("/locks/a b/c%d"); got != "/r/locks/a%20b/c%25d" {
		t.Errorf("recipeHref: %s", got)
	}
	for sec, want := range map[float64]string{0.85: "850ms", 12: "12s", 184: "3m04s", 7500: "2h05m", 273600: "3d04h"} {
		if got := inspect.FormatAge(sec); got != want {
			t.Errorf("inspect.FormatAge(%v) = %s, want %s", sec, got, want)
		}
	}
}
