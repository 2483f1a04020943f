package rwlock

import (
	"strings"

	"github.com/gocurator/curator/recipes/locking"
)

// The lock names Curator gives read and write nodes. They have the same
// length, which Curator's sorting relies on.
const (
	readName  = "__READ__"
	writeName = "__WRIT__"
)

// side says which lock of the pair a node or a handle belongs to.
type side int

const (
	readSide side = iota
	writeSide
)

func (s side) String() string {
	if s == writeSide {
		return "write"
	}
	return "read"
}

// parseChild reads a child of the lock directory: its side and its
// sequence number, the text after the last occurrence of either lock name.
// ok is false for foreign children, which are not participants.
func parseChild(child string) (s side, seq int32, ok bool) {
	r, w := strings.LastIndex(child, readName), strings.LastIndex(child, writeName)
	if r < 0 && w < 0 {
		return 0, 0, false
	}
	name := readName
	if w > r {
		s, name = writeSide, writeName
	}
	seq, ok = locking.Sequence(child, name)
	return s, seq, ok
}

// sequence is the Driver's Sequence of both sides: read and write nodes
// share the directory's counter, so they sort together.
func sequence(child string) (int32, bool) {
	_, seq, ok := parseChild(child)
	return seq, ok
}

// indexOf returns the position of name in sorted, or -1.
func indexOf(sorted []string, name string) int {
	for i, s := range sorted {
		if s == name {
			return i
		}
	}
	return -1
}
