package queue

import (
	"slices"
	"testing"
)

// A spread of 1 keeps the listing's order; a wider one tries a rotation
// of it; a hop moves names after the collision to the end and keeps the
// ones tried; the spread doubles after collisions, halves without, and
// stays between 1 and maxSpread.
func TestSpread(t *testing.T) {
	names := []string{"a", "b", "c", "d", "e", "f"}
	if got := spread(1).start(names); !slices.Equal(got, names) {
		t.Fatalf("spread 1 starts at %v; want the listing's order", got)
	}
	for range 50 {
		got := spread(4).start(names)
		r := slices.Index(names, got[0])
		if r < 0 || r >= 4 || !slices.Equal(got, append(slices.Clone(names[r:]), names[:r]...)) {
			t.Fatalf("spread 4 starts %v; want a rotation from one of the first 4", got)
		}
		order := slices.Clone(names)
		hopped := spread(8).hop(order, 1)
		if !slices.Equal(hopped[:2], names[:2]) {
			t.Fatalf("hop at 1 changed the names tried: %v", hopped)
		}
		if sorted := slices.Sorted(slices.Values(hopped)); !slices.Equal(sorted, names) {
			t.Fatalf("hop lost or repeated names: %v", hopped)
		}
		if !slices.Equal(order, names) {
			t.Fatalf("hop changed its argument: %v", order)
		}
	}
	for _, tc := range []struct {
		s          spread
		collisions int
		want       spread
	}{
		{0, 0, 1}, {1, 0, 1}, {1, 1, 2}, {4, 3, 8}, {maxSpread, 1, maxSpread}, {8, 0, 4}, {2, 0, 1},
	} {
		if got := tc.s.next(tc.collisions); got != tc.want {
			t.Errorf("spread %d after %d collisions = %d; want %d", tc.s, tc.collisions, got, tc.want)
		}
	}
}
