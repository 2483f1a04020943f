package queue

import (
	"encoding/binary"
	"fmt"
)

// The framing of Curator's ItemSerializer, which DistributedQueue writes
// even for a single item: a big-endian int32 version, then for each item an
// opcode byte, a big-endian int32 length and the bytes, then an end opcode.
const (
	frameVersion uint32 = 0x00010001
	opItem       byte   = 0x01
	opEnd        byte   = 0x02

	// The framing's size: version and end opcode, plus 5 bytes per item.
	frameFixed   = 4 + 1
	framePerItem = 1 + 4
)

// encodeItems frames items as one node's data.
func encodeItems(items [][]byte) []byte {
	n := frameFixed
	for _, it := range items {
		n += framePerItem + len(it)
	}
	b := make([]byte, 0, n)
	b = binary.BigEndian.AppendUint32(b, frameVersion)
	for _, it := range items {
		b = append(b, opItem)
		b = binary.BigEndian.AppendUint32(b, uint32(len(it)))
		b = append(b, it...)
	}
	return append(b, opEnd)
}

// decodeItems reads one node's data. Like Curator it stops at the end
// opcode and ignores what follows it; unlike Curator it never allocates
// more than the data holds (a length beyond the data is an error, not a
// huge buffer). Every failure wraps ErrCorruptItem.
func decodeItems(b []byte) ([][]byte, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("%w: %d bytes, too short for the version word", ErrCorruptItem, len(b))
	}
	if v := binary.BigEndian.Uint32(b); v != frameVersion {
		return nil, fmt.Errorf("%w: version word %#08x, want %#08x", ErrCorruptItem, v, frameVersion)
	}
	b = b[4:]
	var items [][]byte
	for off := 4; ; {
		if len(b) == 0 {
			return nil, fmt.Errorf("%w: truncated at byte %d: no end opcode", ErrCorruptItem, off)
		}
		op := b[0]
		b, off = b[1:], off+1
		switch op {
		case opEnd:
			return items, nil
		case opItem:
		default:
			return nil, fmt.Errorf("%w: opcode %#02x at byte %d", ErrCorruptItem, op, off-1)
		}
		if len(b) < 4 {
			return nil, fmt.Errorf("%w: truncated length at byte %d", ErrCorruptItem, off)
		}
		size := int32(binary.BigEndian.Uint32(b))
		b, off = b[4:], off+4
		if size < 0 || int(size) > len(b) {
			return nil, fmt.Errorf("%w: item of %d bytes at byte %d, %d left", ErrCorruptItem, size, off, len(b))
		}
		it := make([]byte, size)
		copy(it, b)
		items = append(items, it)
		b, off = b[size:], off+int(size)
	}
}
