package queue

import (
	"math/rand/v2"
	"slices"
)

// maxSpread bounds how far apart takers that keep taking the same items
// spread out.
const maxSpread = 32

// spread is how far apart from other takers of the same queue a taker
// (a Consume call, a Simple handle) starts: 1 while it runs into nobody,
// so a taker alone takes items in order; doubled after a pass over a
// listing with collisions (an item read, deleted or locked by another
// meanwhile, each a round trip for nothing), halved after one without.
type spread int

// start returns names in the order a pass tries them: from a random one
// of the first s names, those before it last.
func (s spread) start(names []string) []string {
	if s <= 1 || len(names) <= 1 {
		return names
	}
	r := rand.IntN(min(int(s), len(names)))
	return append(slices.Clone(names[r:]), names[:r]...)
}

// hop is a pass's order after a collision at i: a random number of the
// names after i (up to s) moved to the end, to be tried last.
func (s spread) hop(order []string, i int) []string {
	hop := rand.IntN(min(max(int(s), 1), maxSpread) + 1)
	if hop == 0 || i+1 >= len(order) {
		return order
	}
	hop = min(hop, len(order)-i-1)
	rest := order[i+1:]
	return append(append(order[:i+1:i+1], rest[hop:]...), rest[:hop]...)
}

// next is the spread after a pass with that many collisions.
func (s spread) next(collisions int) spread {
	if collisions > 0 {
		return min(2*max(s, 1), maxSpread)
	}
	return max(s/2, 1)
}
