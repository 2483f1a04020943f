package shared

import (
	"errors"

	"github.com/gocurator/curator/framework"
)

// Errors, matched with errors.Is.
var (
	// ErrOutOfRange is returned for a seed or a value that does not fit the
	// 4-byte signed integer Curator stores.
	ErrOutOfRange = errors.New("curator: count out of the int32 range")
	// ErrMalformed is returned when the count node holds fewer than the 4
	// bytes of a count: it was not written by a SharedCount.
	ErrMalformed = errors.New("curator: count node data is not a 4-byte count")
	// ErrClosed is returned by Start after Close (of a Value or a Count).
	ErrClosed = errors.New("curator: shared value closed")
	// ErrNilClient is returned when the count was made with a nil client.
	ErrNilClient = framework.ErrNilClient
	// ErrInvalidPath is returned for a path ZooKeeper would reject, or the
	// root.
	ErrInvalidPath = framework.ErrInvalidPath
	// ErrNilHandle is returned by the calls of a nil *Count or *Value that
	// read or write the node; a nil Count's Value is 0 (a nil Value's
	// Cached is nil), its Watch channel is closed, Listen and Close do
	// nothing (see framework.ErrNilHandle).
	ErrNilHandle = framework.ErrNilHandle
	// ErrLayoutMismatch is framework.ErrLayoutMismatch: the node holds
	// another recipe's value (an atomic value's writer children; for a
	// Count, the 8 bytes of a DistributedAtomicLong).
	ErrLayoutMismatch = framework.ErrLayoutMismatch
)
