package cache

import (
	"errors"

	"github.com/gocurator/curator/framework"
)

// Errors, matched with errors.Is.
var (
	// ErrClosed is returned by Start and Synced after Close.
	ErrClosed = errors.New("curator: cache closed")
	// ErrStarted is returned by a second Start.
	ErrStarted = errors.New("curator: cache already started")
	// ErrNotStarted is returned by Synced before Start has returned nil.
	ErrNotStarted = errors.New("curator: cache not started")
	// ErrNotCompressed is the Err of the event of a node whose data is
	// not gzip although the cache was made with CompressedData: its data is
	// cached as it is on the server.
	ErrNotCompressed = errors.New("curator: node data is not gzip-compressed")
	// ErrInvalidOption is returned by Start for an option with an
	// out-of-range value.
	ErrInvalidOption = framework.ErrInvalidOption
	// ErrInvalidPath is returned by Start for a path ZooKeeper would reject.
	ErrInvalidPath = framework.ErrInvalidPath
	// ErrNilClient is returned by Start when the cache was made with a nil
	// client.
	ErrNilClient = framework.ErrNilClient
	// ErrNilHandle is returned by the calls of a nil *Cache that would talk
	// to ZooKeeper; a nil Cache caches nothing (see framework.ErrNilHandle).
	ErrNilHandle = framework.ErrNilHandle
)
