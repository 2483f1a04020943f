package locking

import (
	"slices"
	"strconv"
	"strings"
)

// Sequence returns the sequence number of a child named with lockName: the
// text after the last occurrence of lockName, read as a signed 32-bit number
// (ZooKeeper prints the parent's int32 counter with %010d, so after 2^31-1 it
// goes negative). ok is false for children that do not carry lockName or
// whose suffix is not a number: they are not participants.
func Sequence(child, lockName string) (seq int32, ok bool) {
	i := strings.LastIndex(child, lockName)
	if i < 0 || lockName == "" {
		return 0, false
	}
	s := child[i+len(lockName):]
	if s == "" || s[0] == '+' {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, false
	}
	return int32(n), true
}

// Before reports whether sequence a was issued before b, wrap-aware: the
// difference is taken modulo 2^32, so 2147483647 comes before -2147483648.
// Valid while live sequence numbers span less than 2^31, which they always
// do in a lock directory.
func Before(a, b int32) bool { return a-b < 0 }

// SortChildren returns the children that seq recognises, in sequence order
// (ties broken by name). Foreign children are dropped.
func SortChildren(children []string, seq func(string) (int32, bool)) []string {
	return sortChildren(children, seq, false)
}

// sortChildren is SortChildren that, with foreign, keeps the children seq
// does not recognise, after the others in their given order. seq is called
// once per child.
func sortChildren(children []string, seq func(string) (int32, bool), foreign bool) []string {
	return sortEntries(children, seq, foreign, func(int32) bool { return true })
}

// sortChildrenUpTo is SortChildren of the children whose sequence is
// last or comes before it.
func sortChildrenUpTo(children []string, seq func(string) (int32, bool), last int32) []string {
	return sortEntries(children, seq, false, func(s int32) bool { return s == last || Before(s, last) })
}

// sortEntries sorts the children seq recognises and keep accepts.
func sortEntries(children []string, seq func(string) (int32, bool), foreign bool, keep func(int32) bool) []string {
	type entry struct {
		name string
		seq  int32
	}
	n := len(children)
	if !foreign {
		n = min(n, 16) // only those up to ours, usually a few
	}
	entries := make([]entry, 0, n)
	var others []string
	for _, c := range children {
		if s, ok := seq(c); ok {
			if keep(s) {
				entries = append(entries, entry{c, s})
			}
		} else if foreign {
			others = append(others, c)
		}
	}
	slices.SortFunc(entries, func(a, b entry) int {
		switch {
		case a.seq != b.seq && Before(a.seq, b.seq):
			return -1
		case a.seq != b.seq:
			return 1
		default:
			return strings.Compare(a.name, b.name)
		}
	})
	out := make([]string, len(entries), len(entries)+len(others))
	for i, e := range entries {
		out[i] = e.name
	}
	return append(out, others...)
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
