package queue

import (
	"time"

	"github.com/gocurator/curator/recipes/locking"
)

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

// Clock is the time a delay queue's consumer sees (tests inject theirs).
type Clock = clock

// SetClock makes q's consumers use c; call it before Consume.
func SetClock(q *DelayQueue, c Clock) { q.q.opts.clock = c }

// OnWait sets a hook told how long a consumer of q will sleep for its
// earliest item, each time it goes to sleep with one not due.
func OnWait(q *DelayQueue, fn func(d time.Duration)) { q.q.onWait = fn }

// Name encodings, for the table tests.
var (
	PriorityPrefix = priorityPrefix
	DelayPrefix    = delayPrefix
	IDPrefix       = idPrefix
	RequeueName    = requeueName
	ItemID         = itemID
	ItemPriority   = itemPriority
	ItemDue        = itemDue
)

// Order returns children in the order a consumer of the variant ("",
// "id", "priority", "delay") takes them.
func Order(kind string, children []string) []string {
	v := map[string]variant{"": plainQueue, "id": idQueue, "priority": priorityQueue, "delay": delayQueue}[kind]
	return v.order(children)
}

// SetSharderClock makes s time its threshold checks on c; call it before
// Start.
func SetSharderClock(s *Sharder, c Clock) { s.opts.clock = c }

// OnCheck sets a hook called after each of s's threshold checks; call it
// before Start.
func OnCheck(s *Sharder, fn func()) { s.onCheck = fn }

// Leads reports whether s's candidacy leads now.
func Leads(s *Sharder) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.latch.HasLeadership()
}

// BeforeAdd sets a hook called when s, leading, is about to add a shard;
// call it before Start.
func BeforeAdd(s *Sharder, fn func()) { s.beforeAdd = fn }
