package inspect

import (
	"errors"
	"fmt"
	"testing"
)

// Item names of each of Curator's queues read back, the variant told from
// them, and the order consumers take them in.
func TestQueueNames(t *testing.T) {
	for _, tc := range []struct {
		names   []string
		variant string
		order   string
	}{
		{[]string{"queue-0000000002", "queue-0000000001"}, QueuePlain, "[1 2]"},
		{[]string{"queue-|b|0000000002", "queue-|a|0000000001", "queue-0000000003"}, QueueID, "[1 2 3]"},
		{[]string{"queue-1000000050000000001", "queue-0FFFFFFFF0000000002", "queue-0000000003"}, QueuePriority, "[3 2 1]"},
		{[]string{"queue-|18C2A3B4F01|0000000001", "queue-|18C2A3B4F00|0000000002", "queue-0000000003"}, QueueDelay, "[3 2 1]"},
		// Ids of hex digits that are no plausible time stay ids.
		{[]string{"queue-|DEADBEEF|0000000001", "queue-|18C2A3B4F00|0000000002"}, QueueID, "[1 2]"},
		{[]string{"qn-0000000002", "qn-0000000001"}, QueuePlain, "[1 2]"},
	} {
		var items []QueueItem
		for _, n := range tc.names {
			it, ok := ParseQueueItem(n)
			if !ok {
				t.Fatalf("%s not read as an item", n)
			}
			items = append(items, it)
		}
		v := QueueVariant(items)
		SortQueue(v, items)
		var seqs []int32
		for _, it := range items {
			seqs = append(seqs, it.Seq)
		}
		if v != tc.variant || fmt.Sprint(seqs) != tc.order {
			t.Errorf("%v: %s %v, want %s %s", tc.names, v, seqs, tc.variant, tc.order)
		}
	}
	it, _ := ParseQueueItem("queue-0FFFFFFFD0000000007")
	if !it.HasPriority || it.Priority != -3 || it.Seq != 7 {
		t.Errorf("priority item %+v", it)
	}
	it, _ = ParseQueueItem("queue-|18C2A3B4F00|0000000007")
	if !it.HasDue || it.Due.UnixMilli() != 0x18C2A3B4F00 {
		t.Errorf("delay item %+v", it)
	}
	for _, n := range []string{"queue-", "queue-12", "lock-0000000001", "queue-x000000001"} {
		if _, ok := ParseQueueItem(n); ok {
			t.Errorf("%s read as an item", n)
		}
	}
}

// DecodeQueueItems reads Curator's ItemSerializer framing and refuses
// anything else.
func TestDecodeQueueItems(t *testing.T) {
	good := []byte{0, 1, 0, 1, 1, 0, 0, 0, 2, 'h', 'i', 1, 0, 0, 0, 0, 2}
	items, err := DecodeQueueItems(good)
	if err != nil || len(items) != 2 || string(items[0]) != "hi" || len(items[1]) != 0 {
		t.Fatalf("decode = %q, %v", items, err)
	}
	for _, bad := range [][]byte{nil, {0, 1, 0, 2, 2}, {0, 1, 0, 1}, {0, 1, 0, 1, 1, 0, 0, 0, 9, 'x', 2}, {0, 1, 0, 1, 7}, good[:len(good)-1]} {
		if _, err := DecodeQueueItems(bad); !errors.Is(err, ErrCorruptQueueItem) {
			t.Errorf("%x: %v", bad, err)
		}
	}
}
