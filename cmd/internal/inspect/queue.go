package inspect

import (
	"encoding/binary"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Queue variants, as QueueVariant reads them from item names (Curator's
// DistributedQueue family; recipes/queue writes the same names).
const (
	QueuePlain    = "queue"          // queue-<seq>
	QueueID       = "id-queue"       // queue-|<id>|<seq>
	QueuePriority = "priority-queue" // queue-<sign digit><8 hex><seq>
	QueueDelay    = "delay-queue"    // queue-|<epoch ms, hex>|<seq>
)

// QueueItem is what a queue item node's name says.
type QueueItem struct {
	Name string
	Seq  int32
	// ID is an id queue item's id (HasID).
	ID    string
	HasID bool
	// Priority is a priority queue item's priority (HasPriority).
	Priority    int32
	HasPriority bool
	// Due is when a delay queue item may be delivered (HasDue).
	Due    time.Time
	HasDue bool
}

// Plausible delay times: an id of hex digits is read as a time only when
// it falls between these (a delay queue's items are due around now).
var (
	minDue = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	maxDue = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
)

// ParseQueueItem reads an item node's name: "queue-" or "qn-", what the
// variant puts there, then a 10-digit sequence; false for other names.
func ParseQueueItem(name string) (QueueItem, bool) {
	prefix := queuePrefix
	if strings.HasPrefix(name, simpleQueuePrefix) {
		prefix = simpleQueuePrefix
	}
	if !queueSeq(name, prefix) {
		return QueueItem{}, false
	}
	cut := len(name) - 10
	seq, err := strconv.ParseInt(name[cut:], 10, 32)
	if err != nil {
		return QueueItem{}, false
	}
	it := QueueItem{Name: name, Seq: int32(seq)}
	mid := name[len(prefix):cut]
	if prefix == simpleQueuePrefix || mid == "" {
		return it, true
	}
	if len(mid) >= 2 && mid[0] == '|' && mid[len(mid)-1] == '|' && strings.Count(mid, "|") == 2 {
		it.ID, it.HasID = mid[1:len(mid)-1], true
		if len(it.ID) >= 8 && strings.ToUpper(it.ID) == it.ID {
			if ms, err := strconv.ParseInt(it.ID, 16, 64); err == nil && ms >= minDue && ms < maxDue {
				it.Due, it.HasDue = time.UnixMilli(ms).UTC(), true
			}
		}
		return it, true
	}
	if len(mid) == 9 && (mid[0] == '0' || mid[0] == '1') && isHex(mid[1:], 8) && strings.ToUpper(mid) == mid {
		u, _ := strconv.ParseUint(mid[1:], 16, 32)
		if p := int32(uint32(u)); (p < 0) == (mid[0] == '0') {
			it.Priority, it.HasPriority = p, true
		}
	}
	return it, true
}

// QueueVariant says which of Curator's queues wrote items: priority if any
// item carries a priority, delay if every bracketed name is a plausible
// time, id if any carries another, else a plain queue (a requeued item
// that Curator wrote as "queue-<seq>" does not change the answer). An id
// queue whose ids all read as times now is taken for a delay queue.
func QueueVariant(items []QueueItem) string {
	var prio, ids, dues int
	for _, it := range items {
		switch {
		case it.HasPriority:
			prio++
		case it.HasDue:
			dues++
		case it.HasID:
			ids++
		}
	}
	switch {
	case prio > 0:
		return QueuePriority
	case ids > 0:
		return QueueID
	case dues > 0:
		return QueueDelay
	}
	return QueuePlain
}

// SortQueue puts items in the order the variant's consumers take them:
// by sequence (plain, id and simple queues), by name (priority: priority,
// then sequence), by time then sequence (delay; an item without a time
// first, as Curator takes it at once).
func SortQueue(variant string, items []QueueItem) {
	slices.SortStableFunc(items, func(a, b QueueItem) int {
		switch variant {
		case QueuePriority:
			return strings.Compare(a.Name, b.Name)
		case QueueDelay:
			var da, db int64
			if a.HasDue {
				da = a.Due.UnixMilli()
			}
			if b.HasDue {
				db = b.Due.UnixMilli()
			}
			if da != db {
				if da < db {
					return -1
				}
				return 1
			}
		}
		switch {
		case a.Seq == b.Seq:
			return strings.Compare(a.Name, b.Name)
		case before(a.Seq, b.Seq):
			return -1
		}
		return 1
	})
}

// ErrCorruptQueueItem is DecodeQueueItems' error for data that is not
// Curator's item framing.
var ErrCorruptQueueItem = errors.New("not Curator's queue item framing")

// DecodeQueueItems reads a DistributedQueue item node: the int32 version
// 0x00010001, per item 0x01, an int32 length and the bytes, then 0x02.
func DecodeQueueItems(data []byte) ([][]byte, error) {
	if len(data) < 4 || binary.BigEndian.Uint32(data) != 0x00010001 {
		return nil, ErrCorruptQueueItem
	}
	var out [][]byte
	for p := 4; ; {
		if p >= len(data) {
			return nil, ErrCorruptQueueItem
		}
		switch data[p] {
		case 0x02:
			return out, nil
		case 0x01:
			if p+5 > len(data) {
				return nil, ErrCorruptQueueItem
			}
			n := int(binary.BigEndian.Uint32(data[p+1:]))
			p += 5
			if n < 0 || n > len(data)-p {
				return nil, ErrCorruptQueueItem
			}
			out = append(out, data[p:p+n])
			p += n
		default:
			return nil, ErrCorruptQueueItem
		}
	}
}
