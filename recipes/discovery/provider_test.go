package discovery_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gocurator/curator/recipes/discovery"
)

type list []discovery.Instance

func (l list) Instances() []discovery.Instance { return l }

func insts(ids ...string) list {
	out := make(list, len(ids))
	for i, id := range ids {
		out[i] = discovery.Instance{Name: "svc", ID: id, Address: "10.0.0." + fmt.Sprint(i+1)}
	}
	return out
}

func picks(t *testing.T, p *discovery.Provider, n int) string {
	t.Helper()
	var out []string
	for range n {
		inst, err := p.Instance()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, inst.ID)
	}
	return strings.Join(out, " ")
}

func TestProviderStrategies(t *testing.T) {
	abc := insts("a", "b", "c")
	disabled := insts("a", "b", "c")
	disabled[1].Enabled = discovery.Bool(false)
	for _, tt := range []struct {
		name string
		src  list
		opts []discovery.ProviderOption
		want string
	}{
		{"round robin by default", abc, nil, "a b c a b c a"},
		{"disabled instances are skipped", disabled, nil, "a c a c"},
		{"filter", abc, []discovery.ProviderOption{discovery.WithFilter(func(i discovery.Instance) bool { return i.ID != "a" })}, "b c b c"},
		{"two filters", abc, []discovery.ProviderOption{
			discovery.WithFilter(func(i discovery.Instance) bool { return i.ID != "a" }),
			discovery.WithFilter(func(i discovery.Instance) bool { return i.ID != "c" }),
		}, "b b b"},
		{"sticky", abc, []discovery.ProviderOption{discovery.WithStrategy(discovery.Sticky(discovery.RoundRobin()))}, "a a a a"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := discovery.NewProvider(tt.src, tt.opts...)
			if got := picks(t, p, len(strings.Fields(tt.want))); got != tt.want {
				t.Fatalf("picks %q, want %q", got, tt.want)
			}
		})
	}
}

// Sticky keeps its instance through changes of the list and of the
// instance's data, and picks again only once it is gone.
func TestStickyMovesOnlyWhenItsInstanceGoes(t *testing.T) {
	s := discovery.Sticky(discovery.RoundRobin())
	ab := insts("a", "b")
	if got := s.Pick(ab).ID; got != "a" {
		t.Fatalf("first pick %s", got)
	}
	updated := insts("b", "a")
	updated[1].Port = discovery.Int(9)
	if got := s.Pick(updated); got.ID != "a" || got.Port == nil {
		t.Fatalf("after an update: %+v, want the updated a", got)
	}
	if got := s.Pick(insts("b", "c")).ID; got != "c" && got != "b" {
		t.Fatalf("after a left: %s", got)
	}
}

func TestRandomPicksEveryInstance(t *testing.T) {
	p := discovery.NewProvider(insts("a", "b", "c"), discovery.WithStrategy(discovery.Random()))
	seen := map[string]bool{}
	for range 300 {
		inst, err := p.Instance()
		if err != nil {
			t.Fatal(err)
		}
		seen[inst.ID] = true
	}
	if len(seen) != 3 {
		t.Fatalf("300 random picks saw %v", seen)
	}
}

func TestProviderWithoutInstances(t *testing.T) {
	p := discovery.NewProvider(list(nil))
	if _, err := p.Instance(); !errors.Is(err, discovery.ErrNoInstances) {
		t.Fatalf("Instance = %v, want ErrNoInstances", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Instance(); !errors.Is(err, discovery.ErrClosed) {
		t.Fatalf("Instance after Close = %v, want ErrClosed", err)
	}
	var nilp *discovery.Provider
	if _, err := nilp.Instance(); !errors.Is(err, discovery.ErrNilHandle) {
		t.Fatalf("nil provider: %v", err)
	}
}

// A pick from a cached list allocates nothing.
func TestProviderPickDoesNotAllocate(t *testing.T) {
	p := discovery.NewProvider(insts("a", "b", "c", "d"))
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := p.Instance(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 0 {
		t.Fatalf("%v allocations per pick", allocs)
	}
}

func BenchmarkProviderPick(b *testing.B) {
	src := make(list, 16)
	for i := range src {
		src[i] = discovery.Instance{Name: "svc", ID: fmt.Sprint(i)}
	}
	p := discovery.NewProvider(src)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := p.Instance(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
