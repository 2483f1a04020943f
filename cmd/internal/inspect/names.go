package inspect

import (
	"strings"

	"github.com/gocurator/curator/recipes/locking"
)

// Base names that mark a participant node, by recipe. The sequence is the
// text after the last occurrence of the mark.
const (
	markLock   = "lock-"     // mutex, semaphore V1, V2 gate, LeaderSelector, go-zookeeper
	markRead   = "__READ__"  // Curator read lock
	markWrite  = "__WRIT__"  // Curator write lock
	markLease  = "lease-"    // Curator semaphore V2 lease
	markLatch  = "latch-"    // Curator LeaderLatch
	markKLock  = "__lock__"  // kazoo Lock and write lock
	markKRLock = "__rlock__" // kazoo read lock
)

// Client flavours, told apart by the prefix of a node's name.
const (
	ClientCurator     = "curator"      // _c_<36-char uuid>-: Curator and this module
	ClientGoZookeeper = "go-zookeeper" // _c_<32 hex>-: go-zookeeper's protected create
	ClientKazoo       = "kazoo"        // <32 hex>__lock__ / __rlock__
	ClientOther       = "other"        // no known prefix
)

// parsed is what a participant's name says.
type parsed struct {
	mark   string
	client string
	seq    int32
}

// marks is the order names are tried in: the longer and more specific
// marks first, so "__rlock__" is not read as something else.
var marks = []string{markRead, markWrite, markKRLock, markKLock, markLease, markLatch, markLock}

// parseName reads a participant's name; ok is false for names that carry no
// mark followed by a signed 32-bit sequence (foreign children).
func parseName(name string) (p parsed, ok bool) {
	for _, m := range marks {
		seq, ok := locking.Sequence(name, m)
		if !ok {
			continue
		}
		i := strings.LastIndex(name, m)
		return parsed{mark: m, client: clientOf(name[:i], m), seq: seq}, true
	}
	return parsed{}, false
}

// clientOf tells the flavour from the text before the mark.
func clientOf(prefix, mark string) string {
	switch {
	case mark == markKLock || mark == markKRLock:
		if isHex(prefix, 32) {
			return ClientKazoo
		}
		return ClientOther
	case len(prefix) == 40 && strings.HasPrefix(prefix, "_c_") && prefix[39] == '-' && isUUID(prefix[3:39]):
		return ClientCurator
	case len(prefix) == 36 && strings.HasPrefix(prefix, "_c_") && prefix[35] == '-' && isHex(prefix[3:35], 32):
		return ClientGoZookeeper
	default:
		return ClientOther
	}
}

// isUUID reports whether s is the canonical 8-4-4-4-12 form.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !isHexDigit(s[i]) {
				return false
			}
		}
	}
	return true
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isHexDigit(s[i]) {
			return false
		}
	}
	return true
}

func isHexDigit(b byte) bool {
	return '0' <= b && b <= '9' || 'a' <= b && b <= 'f' || 'A' <= b && b <= 'F'
}

// before reports whether sequence a was issued before b, wrap-aware, as
// the recipes compare them (after 2^31-1 the counter goes negative).
func before(a, b int32) bool { return a-b < 0 }
