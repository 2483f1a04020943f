package queue

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gocurator/curator/recipes/locking"
)

// variant is which of Curator's DistributedQueue family a Queue is: they
// share the consumer and differ only in how an item node is named, and so
// in the order items are taken and what a requeue keeps.
type variant int

const (
	plainQueue    variant = iota // queue-<seq>
	idQueue                      // queue-|<id>|<seq>
	priorityQueue                // queue-<sign><8 hex><seq>
	delayQueue                   // queue-|<epoch ms, hex>|<seq>
)

// idSeparator brackets an id queue's id and a delay queue's time in an
// item's name (Curator's SEPARATOR in both).
const idSeparator = '|'

// seqDigits is the width of the sequence ZooKeeper appends (%010d).
const seqDigits = 10

// splitSeq splits an item node's name into the name it was created with
// (everything before the server's sequence) and the sequence; false when
// the name is not "queue-" + anything + a sequence.
func splitSeq(name string) (prefix string, seq int32, ok bool) {
	if !strings.HasPrefix(name, itemPrefix) || len(name) < len(itemPrefix)+seqDigits {
		return "", 0, false
	}
	cut := len(name) - seqDigits
	// Past 2^31-1 the server prints a negative sequence, one more byte.
	if cut-1 >= len(itemPrefix) && name[cut-1] == '-' {
		cut--
	}
	n, err := strconv.ParseInt(name[cut:], 10, 32)
	if err != nil || name[cut] == '+' {
		return "", 0, false
	}
	return name[:cut], int32(n), true
}

// between returns what lies between the first two separators of s (an id
// queue's id, a delay queue's time), false when there are not two.
func between(s string) (string, bool) {
	i := strings.IndexByte(s, idSeparator)
	if i < 0 {
		return "", false
	}
	j := strings.IndexByte(s[i+1:], idSeparator)
	if j < 0 {
		return "", false
	}
	return s[i+1 : i+1+j], true
}

// fixID is the id as an item's name carries it: '/' and the separator
// replaced with '_' (Curator's fixId).
func fixID(id string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == idSeparator {
			return '_'
		}
		return r
	}, id)
}

// idPrefix is the name an id queue's item is created with.
func idPrefix(id string) string {
	return itemPrefix + string(idSeparator) + fixID(id) + string(idSeparator)
}

// itemID is the id in an id queue item's name; false for an item put
// without one (a plain DistributedQueue's, or a Curator "bad node").
func itemID(name string) (string, bool) {
	prefix, _, ok := splitSeq(name)
	if !ok {
		return "", false
	}
	return between(prefix[len(itemPrefix):])
}

// priorityPrefix is the name a priority queue's item is created with:
// "queue-", '1' for a priority >= 0 or '0' for a negative one, then the
// priority's 32 bits as 8 upper-case hex digits (Curator's
// priorityToString), so that names sort by priority, lowest first.
func priorityPrefix(priority int32) string {
	sign := "1"
	if priority < 0 {
		sign = "0"
	}
	return fmt.Sprintf("%s%s%08X", itemPrefix, sign, uint32(priority))
}

// itemPriority reads a priority queue item's priority; false for an item
// named without one (Curator requeues a priority item so).
func itemPriority(name string) (int32, bool) {
	prefix, _, ok := splitSeq(name)
	if !ok {
		return 0, false
	}
	p := prefix[len(itemPrefix):]
	if len(p) != 9 || (p[0] != '0' && p[0] != '1') {
		return 0, false
	}
	u, err := strconv.ParseUint(p[1:], 16, 32)
	if err != nil || strings.ToUpper(p[1:]) != p[1:] {
		return 0, false
	}
	v := int32(uint32(u))
	if (v < 0) != (p[0] == '0') {
		return 0, false
	}
	return v, true
}

// delayPrefix is the name a delay queue's item is created with: the time
// in milliseconds since the epoch as (at least 8) upper-case hex digits
// between separators (Curator's epochToString).
func delayPrefix(at time.Time) string {
	return fmt.Sprintf("%s%c%08X%c", itemPrefix, idSeparator, at.UnixMilli(), idSeparator)
}

// itemDue reads a delay queue item's time; false for an item named
// without one, which Curator, and this package, deliver at once.
func itemDue(name string) (time.Time, bool) {
	prefix, _, ok := splitSeq(name)
	if !ok {
		return time.Time{}, false
	}
	// Curator reads the time between the last two separators.
	s := prefix[len(itemPrefix):]
	j := strings.LastIndexByte(s, idSeparator)
	if j < 0 {
		return time.Time{}, false
	}
	i := strings.LastIndexByte(s[:j], idSeparator)
	if i < 0 || j == i+1 {
		return time.Time{}, false
	}
	ms, err := strconv.ParseInt(s[i+1:j], 16, 64)
	if err != nil || ms <= 0 {
		return time.Time{}, false
	}
	return time.UnixMilli(ms), true
}

// order returns the item nodes among children in the order the variant
// takes them; children that are no items are left out.
//
//   - plain and id queues: by sequence (Curator sorts an id queue by its
//     names with the ids cut out, which is the sequence);
//   - priority queue: by name, which is by priority, then sequence
//     (Curator's order, so an item Curator requeued without its priority
//     comes first, as it does for Curator);
//   - delay queue: by time, then sequence; an item without a time first.
func (v variant) order(children []string) []string {
	switch v {
	case plainQueue:
		return locking.SortChildren(children, itemSequence)
	case idQueue:
		return locking.SortChildren(children, func(n string) (int32, bool) {
			_, seq, ok := splitSeq(n)
			return seq, ok
		})
	}
	type entry struct {
		name string
		seq  int32
		due  int64
	}
	entries := make([]entry, 0, len(children))
	for _, n := range children {
		_, seq, ok := splitSeq(n)
		if !ok {
			continue
		}
		e := entry{name: n, seq: seq}
		if at, ok := itemDue(n); ok && v == delayQueue {
			e.due = at.UnixMilli()
		}
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b entry) int {
		if v == priorityQueue {
			return strings.Compare(a.name, b.name)
		}
		switch {
		case a.due != b.due:
			return cmpInt(a.due, b.due)
		case a.seq != b.seq && locking.Before(a.seq, b.seq):
			return -1
		case a.seq != b.seq:
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.name
	}
	return out
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// requeueName is the name an item goes back under when its consumer fails:
// the name it was made with, so that it keeps its id, priority or time
// (CURATOR-56, CURATOR-224; Curator requeues a priority or delay item as a
// plain "queue-", which jumps the queue). For a node the variant does not
// name, "queue-".
func requeueName(name string) string {
	if prefix, _, ok := splitSeq(name); ok {
		return prefix
	}
	return itemPrefix
}

// describe fills in what an item's name says of it in the variant.
func (v variant) describe(it *Item) {
	switch v {
	case idQueue:
		it.ID, _ = itemID(it.Name)
	case priorityQueue:
		p, _ := itemPriority(it.Name)
		it.Priority = int(p)
	case delayQueue:
		it.Due, _ = itemDue(it.Name)
	}
}

// checkPriority refuses a priority Curator's int cannot carry.
func checkPriority(priority int) error {
	if priority < math.MinInt32 || priority > math.MaxInt32 {
		return fmt.Errorf("%w: priority %d outside int32", ErrInvalidOption, priority)
	}
	return nil
}
