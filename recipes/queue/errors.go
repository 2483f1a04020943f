package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/gocurator/curator/framework"
)

// Errors, matched with errors.Is.
var (
	// ErrCorruptItem is reported (WithErrorHandler) for an item node whose
	// data is not Curator's item framing: a wrong version word, an unknown
	// opcode, a truncated frame. The node is parked (WithParkPath) or left
	// where it is and skipped; it never stops a consumer.
	ErrCorruptItem = errors.New("curator: corrupt queue item")
	// ErrConsumer wraps the error a consume function returned, as it is
	// reported (WithErrorHandler) with the item's node name.
	ErrConsumer = errors.New("curator: queue consumer failed")
	// ErrItemLost is an Item's Err once its lock node may no longer be
	// ours (lock-safety mode): the connection was lost as the client's
	// ErrorPolicy counts it, or the session ended. Another consumer may
	// then take the item: stop working on it.
	ErrItemLost = errors.New("curator: queue item lock lost")
	// ErrFenced is reported when a consumer's completion of an item finds
	// that another consumer has taken the item since (its lock was lost).
	ErrFenced = errors.New("curator: queue item taken by another consumer")
	// ErrNotFenced is returned by an Item's fencing calls when the item
	// has no fence: a queue without a lock path deletes an item before it
	// is delivered, so nobody else can have it.
	ErrNotFenced = errors.New("curator: queue item has no fence (no lock path)")
	// ErrBacklog is reported (WithErrorHandler) when the queue's children
	// listing grows past ZooKeeper's default jute.maxbuffer (about 50,000
	// items): Curator's consumers, whose client refuses such a reply, fail
	// in a loop on it, and ZooKeeper keeps the whole backlog in memory. Go
	// consumers keep consuming. The way out: more consumers, a sharded
	// queue, or a larger jute.maxbuffer on servers and Java clients.
	ErrBacklog = errors.New("curator: queue listing larger than jute.maxbuffer")
	// ErrNotStarted is returned by the calls of a Sharder made before its
	// Start.
	ErrNotStarted = errors.New("curator: queue sharder not started")
	// ErrClosed is framework.ErrClosed: the Queue or its client was closed.
	ErrClosed = framework.ErrClosed
	// ErrNilClient is framework.ErrNilClient.
	ErrNilClient = framework.ErrNilClient
	// ErrInvalidPath is framework.ErrInvalidPath: a path ZooKeeper would
	// reject, or the root.
	ErrInvalidPath = framework.ErrInvalidPath
	// ErrInvalidOption is framework.ErrInvalidOption: a nil context or
	// function, an empty PutMulti, an option out of range.
	ErrInvalidOption = framework.ErrInvalidOption
	// ErrNilHandle is framework.ErrNilHandle, returned by the calls of a
	// nil *Queue or *Simple.
	ErrNilHandle = framework.ErrNilHandle
	// ErrDataTooLarge is framework.ErrDataTooLarge: an item (or a
	// PutMulti's items together) larger than the servers' jute.maxbuffer,
	// refused before anything is written.
	ErrDataTooLarge = framework.ErrDataTooLarge
)

// validatePath checks a queue's path (or lock or park path).
func validatePath(path string) error {
	if err := framework.ValidatePath(path); err != nil {
		return err
	}
	if path == "/" {
		return fmt.Errorf("%w: a queue cannot live at the root", ErrInvalidPath)
	}
	return nil
}

// checkCtx refuses a nil context before anything is sent.
func checkCtx(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", ErrInvalidOption)
	}
	return nil
}
