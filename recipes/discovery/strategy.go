package discovery

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// Strategy picks one instance from the instances a Provider offers, as
// Curator's ProviderStrategy does. Pick is called with a non-empty slice it
// must not keep or change, from many goroutines at once.
type Strategy interface {
	Pick(instances []Instance) Instance
}

// RoundRobin returns a strategy that takes the instances in turn (Curator's
// RoundRobinStrategy, the default). Its counter is unsigned and taken
// modulo the number of instances, so it stays correct past 2^31 picks,
// where Curator's Math.abs of an overflowed int goes negative (pitfall 24).
func RoundRobin() Strategy { return &roundRobin{} }

type roundRobin struct{ next atomic.Uint64 }

func (r *roundRobin) Pick(instances []Instance) Instance {
	n := r.next.Add(1) - 1
	return instances[n%uint64(len(instances))]
}

// Random returns a strategy that picks an instance at random (Curator's
// RandomStrategy).
func Random() Strategy { return randomStrategy{} }

type randomStrategy struct{}

func (randomStrategy) Pick(instances []Instance) Instance {
	return instances[rand.IntN(len(instances))]
}

// Sticky returns a strategy that keeps returning the instance first picked
// by master while it is offered (by service name and id: an Update of the
// instance keeps it), and picks again with master once it is not (Curator's
// StickyStrategy).
func Sticky(master Strategy) Strategy {
	if master == nil {
		master = RoundRobin()
	}
	return &sticky{master: master}
}

type sticky struct {
	master Strategy
	mu     sync.Mutex
	name   string
	id     string
	picked bool
	picks  uint64 // instances picked by master
}

func (s *sticky) Pick(instances []Instance) Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.picked {
		for _, inst := range instances {
			if inst.Name == s.name && inst.ID == s.id {
				return inst
			}
		}
	}
	inst := s.master.Pick(instances)
	s.name, s.id, s.picked = inst.Name, inst.ID, true
	s.picks++
	return inst
}
