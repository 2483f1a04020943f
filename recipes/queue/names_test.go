package queue_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/gocurator/curator/recipes/queue"
)

// The names Curator 5.4 writes (DistributedPriorityQueue.priorityToString,
// DistributedDelayQueue.epochToString, DistributedIdQueue.makeIdPath),
// and what a name says back.
func TestNameEncodings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, got, want string
	}{
		{"priority 0", queue.PriorityPrefix(0), "queue-100000000"},
		{"priority 5", queue.PriorityPrefix(5), "queue-100000005"},
		{"priority max", queue.PriorityPrefix(math.MaxInt32), "queue-17FFFFFFF"},
		{"priority -1", queue.PriorityPrefix(-1), "queue-0FFFFFFFF"},
		{"priority min", queue.PriorityPrefix(math.MinInt32), "queue-080000000"},
		{"delay now-ish", queue.DelayPrefix(time.UnixMilli(0x18C2A3B4F00)), "queue-|18C2A3B4F00|"},
		{"delay padded to 8", queue.DelayPrefix(time.UnixMilli(1)), "queue-|00000001|"},
		{"delay truncated to ms", queue.DelayPrefix(time.UnixMilli(1000).Add(999 * time.Microsecond)), "queue-|000003E8|"},
		{"id", queue.IDPrefix("job-42"), "queue-|job-42|"},
		{"id with / and |", queue.IDPrefix("a/b|c"), "queue-|a_b_c|"},
		{"requeue plain", queue.RequeueName("queue-0000000042"), "queue-"},
		{"requeue id", queue.RequeueName("queue-|job|0000000042"), "queue-|job|"},
		{"requeue priority", queue.RequeueName("queue-0FFFFFFFF0000000042"), "queue-0FFFFFFFF"},
		{"requeue delay", queue.RequeueName("queue-|18C2A3B4F00|0000000042"), "queue-|18C2A3B4F00|"},
		{"requeue after the sequence wrapped", queue.RequeueName("queue-|x|-2147483647"), "queue-|x|"},
		{"requeue plain after the wrap", queue.RequeueName("queue--2147483647"), "queue-"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
	}

	for _, tc := range []struct {
		name   string
		id     string
		idOK   bool
		prio   int32
		prioOK bool
		due    int64
		dueOK  bool
	}{
		{"queue-0000000001", "", false, 0, false, 0, false},
		{"queue-|job|0000000001", "job", true, 0, false, 0, false},
		{"queue-||0000000001", "", true, 0, false, 0, false},
		{"queue-1000000050000000001", "", false, 5, true, 0, false},
		{"queue-0FFFFFFFE0000000001", "", false, -2, true, 0, false},
		{"queue-1FFFFFFFE0000000001", "", false, 0, false, 0, false}, // sign digit disagrees
		{"queue-|18C2A3B4F00|0000000001", "18C2A3B4F00", true, 0, false, 0x18C2A3B4F00, true},
		{"queue-|zz|0000000001", "zz", true, 0, false, 0, false},
		{"other-0000000001", "", false, 0, false, 0, false},
	} {
		id, idOK := queue.ItemID(tc.name)
		p, pOK := queue.ItemPriority(tc.name)
		d, dOK := queue.ItemDue(tc.name)
		var ms int64
		if dOK {
			ms = d.UnixMilli()
		}
		if id != tc.id || idOK != tc.idOK || p != tc.prio || pOK != tc.prioOK || ms != tc.due || dOK != tc.dueOK {
			t.Errorf("%s: id %q %v, priority %d %v, due %d %v", tc.name, id, idOK, p, pOK, ms, dOK)
		}
	}
}

// Each variant's consumers take items in Curator's order.
func TestOrder(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind     string
		children []string
		want     []string
	}{
		{"id", []string{"queue-|b|0000000003", "queue-|a|0000000002", "x", "queue-|c|0000000001", "queue-0000000004"},
			[]string{"queue-|c|0000000001", "queue-|a|0000000002", "queue-|b|0000000003", "queue-0000000004"}},
		{"priority", []string{"queue-1000000050000000001", "queue-0FFFFFFFF0000000002", "queue-1000000000000000003",
			"queue-1000000050000000000", "queue-0800000000000000009", "lock"},
			// An item Curator requeued without a priority sorts first for
			// Curator, and so here.
			[]string{"queue-0800000000000000009", "queue-0FFFFFFFF0000000002", "queue-1000000000000000003",
				"queue-1000000050000000000", "queue-1000000050000000001"}},
		{"priority with a Curator-requeued item", []string{"queue-1000000000000000001", "queue-0000000002"},
			[]string{"queue-0000000002", "queue-1000000000000000001"}},
		{"delay", []string{"queue-|18C2A3B4F01|0000000001", "queue-|18C2A3B4F00|0000000005", "queue-|18C2A3B4F00|0000000002", "queue-0000000009"},
			[]string{"queue-0000000009", "queue-|18C2A3B4F00|0000000002", "queue-|18C2A3B4F00|0000000005", "queue-|18C2A3B4F01|0000000001"}},
	} {
		kind := tc.kind
		if kind == "priority with a Curator-requeued item" {
			kind = "priority"
		}
		if got := queue.Order(kind, tc.children); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: %v, want %v", tc.kind, got, tc.want)
		}
	}
}
