package shared

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Versioned is a value and the data version of the node it was read from,
// the token TrySet compares against (Curator's VersionedValue): a
// Versioned[[]byte] for a Value, a VersionedValue for a Count.
type Versioned[T any] struct {
	// Version is the node's data version; -1 for a value never read from
	// ZooKeeper (the seed of a Value or Count that is not started).
	Version int32
	// Value is the value (a Count's integer).
	Value T
}

// VersionedValue is a count and the data version of the node it was read
// from, the token Count.TrySet compares against.
type VersionedValue = Versioned[int]

// countBytes is the size of a count on the wire: a big-endian int32, as
// Curator's SharedCount writes it.
const countBytes = 4

// encode returns v as Curator stores it.
func encode(v int) ([]byte, error) {
	if v < math.MinInt32 || v > math.MaxInt32 {
		return nil, fmt.Errorf("%w: %d", ErrOutOfRange, v)
	}
	b := make([]byte, countBytes)
	binary.BigEndian.PutUint32(b, uint32(int32(v)))
	return b, nil
}

// decode reads a count as Curator does (ByteBuffer.getInt): the first four
// bytes, big-endian, signed. Shorter data is not a count.
func decode(b []byte) (int, error) {
	switch {
	case len(b) < countBytes:
		return 0, fmt.Errorf("%w: %d bytes", ErrMalformed, len(b))
	case len(b) == 8:
		// Curator's SharedCount reads the long's high half as the count.
		return 0, fmt.Errorf("%w: 8 bytes, a DistributedAtomicLong's value, not a count", ErrLayoutMismatch)
	}
	return int(int32(binary.BigEndian.Uint32(b))), nil
}
