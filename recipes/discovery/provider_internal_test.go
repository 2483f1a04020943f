package discovery

import (
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/clock"
)

type staticSource []Instance

func (s staticSource) Instances() []Instance { return s }

func instances(n int) staticSource {
	out := make(staticSource, n)
	for i := range out {
		out[i] = Instance{Name: "svc", ID: fmt.Sprint("i", i)}
	}
	return out
}

// Curator's RoundRobinStrategy takes Math.abs(index++) % size: at 2^31
// the int overflows, Math.abs(Integer.MIN_VALUE) is negative and the pick
// throws (pitfall 24). Ours counts unsigned: the turn carries on across
// 2^31 and 2^32, and wraps at 2^64 without ever going out of range.
func TestRoundRobinPast2To31Picks(t *testing.T) {
	src := instances(3)
	for _, start := range []uint64{math.MaxInt32 - 3, math.MaxUint32 - 3, math.MaxUint64 - 3} {
		t.Run(fmt.Sprint(start), func(t *testing.T) {
			rr := &roundRobin{}
			rr.next.Store(start)
			for k := uint64(0); k < 8; k++ {
				n := start + k
				got := rr.Pick(src)
				if want := src[n%3]; got.ID != want.ID {
					t.Fatalf("pick %d: got %s, want %s", n, got.ID, want.ID)
				}
			}
		})
	}
}

func TestRoundRobinIsFairUnderConcurrency(t *testing.T) {
	src := instances(4)
	p := NewProvider(src)
	const goroutines, each = 8, 1000
	counts := make([]map[string]int, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		counts[g] = map[string]int{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				inst, err := p.Instance()
				if err != nil {
					t.Error(err)
					return
				}
				counts[g][inst.ID]++
			}
		}()
	}
	wg.Wait()
	total := map[string]int{}
	for _, c := range counts {
		for id, n := range c {
			total[id] += n
		}
	}
	for _, inst := range src {
		if total[inst.ID] != goroutines*each/len(src) {
			t.Fatalf("picks per instance %v, want %d each", total, goroutines*each/len(src))
		}
	}
}

// Curator's DownInstancePolicy: two errors within 30s take an instance
// out until 30s after the first; one error does nothing.
func TestDownInstancePolicy(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	o := defaultProviderOptions()
	o.clock = clk
	src := instances(2)
	p := newProvider(src, o)
	ids := func() []string {
		var out []string
		for _, inst := range p.Instances() {
			out = append(out, inst.ID)
		}
		return out
	}
	steps := []struct {
		name    string
		advance time.Duration
		noteI0  bool
		want    string
	}{
		{"all up", 0, false, "[i0 i1]"},
		{"one error is below the threshold", 0, true, "[i0 i1]"},
		{"the second error takes i0 out", 10 * time.Second, true, "[i1]"},
		{"still out just before 30s after the first error", 20*time.Second - time.Millisecond, false, "[i1]"},
		{"back 30s after the first error", time.Millisecond, false, "[i0 i1]"},
		{"counting starts again", 0, true, "[i0 i1]"},
	}
	for _, s := range steps {
		clk.Advance(s.advance)
		if s.noteI0 {
			p.NoteError(src[0])
		}
		if got := fmt.Sprint(ids()); got != s.want {
			t.Fatalf("%s: offered %s, want %s", s.name, got, s.want)
		}
	}
	// Every instance down: no instance, a typed error.
	p.NoteError(src[1])
	p.NoteError(src[1])
	p.NoteError(src[0])
	if _, err := p.Instance(); err == nil || err != ErrNoInstances {
		t.Fatalf("Instance with every instance down: %v, want ErrNoInstances", err)
	}
}
