package queue

import "github.com/gocurator/curator/recipes/locking"

// Exported for the tests of package queue_test.
var (
	EncodeItems = encodeItems
	DecodeItems = decodeItems
)

// OnPass sets a hook called when a consumer of q passes an item by because
// another consumer holds its lock.
func OnPass(q *Queue, fn func(name string)) { q.onPass = fn }

// Waiting returns how many Takes of s hold a watch on the empty queue.
func Waiting(s *Simple) int { return int(s.waiting.Load()) }

// SortItems returns the item nodes among children in sequence order.
func SortItems(children []string) []string {
	return locking.SortChildren(children, itemSequence)
}

// SortSimple is sortSimple.
var SortSimple = sortSimple
