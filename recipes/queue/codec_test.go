package queue_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/gocurator/curator/recipes/queue"
)

// The framing is Curator's ItemSerializer, byte for byte: a version word
// 0x00010001, then 0x01 + int32 length + bytes per item, then 0x02.
func TestEncodeGolden(t *testing.T) {
	tests := []struct {
		name  string
		items [][]byte
		want  []byte
	}{
		{"one", [][]byte{[]byte("hi")}, []byte{0, 1, 0, 1, 1, 0, 0, 0, 2, 'h', 'i', 2}},
		{"empty item", [][]byte{{}}, []byte{0, 1, 0, 1, 1, 0, 0, 0, 0, 2}},
		{"two", [][]byte{{'a'}, {'b', 'c'}}, []byte{0, 1, 0, 1, 1, 0, 0, 0, 1, 'a', 1, 0, 0, 0, 2, 'b', 'c', 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := queue.EncodeItems(tt.items)
			if !bytes.Equal(got, tt.want) {
				t.Fatalf("encode = %x, want %x", got, tt.want)
			}
			back, err := queue.DecodeItems(got)
			if err != nil || len(back) != len(tt.items) {
				t.Fatalf("decode = %q, %v", back, err)
			}
			for i := range back {
				if !bytes.Equal(back[i], tt.items[i]) || back[i] == nil {
					t.Fatalf("item %d = %q, want %q", i, back[i], tt.items[i])
				}
			}
		})
	}
}

// Foreign or damaged data is ErrCorruptItem, never a panic or a huge
// allocation.
func TestDecodeCorrupt(t *testing.T) {
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"short version", []byte{0, 1}},
		{"wrong version", []byte{0, 1, 0, 2, 2}},
		{"raw bytes (a simple queue's item)", []byte("hello world")},
		{"no end opcode", []byte{0, 1, 0, 1}},
		{"unknown opcode", []byte{0, 1, 0, 1, 7}},
		{"truncated length", []byte{0, 1, 0, 1, 1, 0, 0}},
		{"length past the end", []byte{0, 1, 0, 1, 1, 0x7f, 0xff, 0xff, 0xff, 'x', 2}},
		{"negative length", []byte{0, 1, 0, 1, 1, 0xff, 0xff, 0xff, 0xff, 2}},
		{"item without end", []byte{0, 1, 0, 1, 1, 0, 0, 0, 1, 'x'}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if items, err := queue.DecodeItems(tt.data); !errors.Is(err, queue.ErrCorruptItem) {
				t.Fatalf("decode = %q, %v; want ErrCorruptItem", items, err)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(queue.EncodeItems([][]byte{[]byte("a"), {}}))
	f.Add([]byte{0, 1, 0, 1, 1, 0, 0, 0, 5})
	f.Fuzz(func(t *testing.T, data []byte) {
		items, err := queue.DecodeItems(data)
		if err != nil {
			return
		}
		// What decodes encodes back to a prefix of the data (Curator
		// ignores what follows the end opcode).
		if enc := queue.EncodeItems(items); !bytes.HasPrefix(data, enc) {
			t.Fatalf("%x decoded to %q, which encodes to %x", data, items, enc)
		}
	})
}

// Items are taken in sequence order, read as the signed 32-bit counter
// ZooKeeper prints (wrap-aware, pitfall 11); children not named like the
// layout's items are left out.
func TestItemOrder(t *testing.T) {
	tests := []struct {
		name     string
		children []string
		want     []string
		sort     func([]string) []string
	}{
		{"numeric", []string{"queue-0000000010", "queue-0000000002", "queue-0000000001"},
			[]string{"queue-0000000001", "queue-0000000002", "queue-0000000010"}, queue.SortItems},
		{"wrap", []string{"queue--2147483648", "queue-2147483647", "queue-2147483646"},
			[]string{"queue-2147483646", "queue-2147483647", "queue--2147483648"}, queue.SortItems},
		{"foreign", []string{"lock", "queue-0000000003", "qn-0000000001", "xqueue-0000000001", "queue-x"},
			[]string{"queue-0000000003"}, queue.SortItems},
		{"simple", []string{"qn-0000000002", "queue-0000000001", "qn-0000000001"},
			[]string{"qn-0000000001", "qn-0000000002"}, queue.SortSimple},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.sort(tt.children); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}
