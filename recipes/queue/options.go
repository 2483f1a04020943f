package queue

import (
	"fmt"
	"time"

	"github.com/gocurator/curator/connstate"
)

// Option configures a Queue.
type Option func(*options)

// ErrorMode is what a consumer does with an item whose consume function
// returned an error (Curator's ErrorMode).
type ErrorMode int

// The error modes.
const (
	// Requeue puts the item back at the tail of the queue (Curator's
	// REQUEUE, the default). With a lock path the item is removed and put
	// back in one transaction; of a PutMulti node only the items not yet
	// consumed go back.
	Requeue ErrorMode = iota
	// Delete drops the item (Curator's DELETE).
	Delete
)

// String returns the mode's name, "requeue" or "delete".
func (m ErrorMode) String() string {
	switch m {
	case Requeue:
		return "requeue"
	case Delete:
		return "delete"
	}
	return fmt.Sprintf("ErrorMode(%d)", int(m))
}

type options struct {
	// lockPath, when set, selects Curator's lock-safety mode: an item is
	// locked by an EPHEMERAL node "<lockPath>/<item name>" while it is
	// consumed and removed only after.
	lockPath string
	// errorMode says what a failed consume does with its item: Requeue.
	errorMode ErrorMode
	// parkPath, when set, receives corrupt items (moved there, same
	// name); empty: they stay in the queue and are skipped.
	parkPath string
	// onError hears what a consumer does not return: failed consume
	// functions, corrupt items, lost locks, transient ZooKeeper errors.
	onError func(error)
	// onState hears the client's connection states while Consume runs.
	onState func(connstate.State)
	// invalid is the first bad option, reported by every call.
	invalid error
	// clock tells a delay queue's consumer the time and wakes it when
	// the earliest item is due: the system's (tests inject theirs).
	clock clock
	// putListener hears each completed background put: nobody.
	putListener func(PutEvent)
	// putBuffer is how many background puts may wait: 1000.
	putBuffer int
}

func defaultOptions() options {
	return options{errorMode: Requeue, clock: systemClock{}, putBuffer: 1000}
}

// clock is the time as a delay queue's consumer sees it.
type clock interface {
	Now() time.Time
	// After returns a channel that receives once d has passed, and a
	// function that releases it early.
	After(d time.Duration) (<-chan time.Time, func())
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) After(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}

// WithLockPath selects Curator's lock-safety mode (QueueBuilder.lockPath):
// a consumer locks an item with the EPHEMERAL node "<lockPath>/<item
// name>" before reading it, and removes the item only after the consume
// function returned nil for it. An item whose consumer dies is delivered
// again, as soon as its lock node goes. Go and Java consumers of one queue
// must use the same lock path.
func WithLockPath(lockPath string) Option {
	return func(o *options) {
		if err := validatePath(lockPath); err != nil && o.invalid == nil {
			o.invalid = fmt.Errorf("lock path %q: %w", lockPath, err)
		}
		o.lockPath = lockPath
	}
}

// WithErrorMode sets what a consumer does with an item whose consume
// function returned an error: Requeue (the default) or Delete.
func WithErrorMode(m ErrorMode) Option {
	return func(o *options) {
		if (m != Requeue && m != Delete) && o.invalid == nil {
			o.invalid = fmt.Errorf("%w: %v", ErrInvalidOption, m)
		}
		o.errorMode = m
	}
}

// WithParkPath moves a corrupt item (ErrCorruptItem) to "<parkPath>/<item
// name>", data unchanged, instead of leaving it in the queue for every
// consumer to skip. Java consumers would delete such an item (Curator logs
// and drops it); parking keeps it for a human.
func WithParkPath(parkPath string) Option {
	return func(o *options) {
		if err := validatePath(parkPath); err != nil && o.invalid == nil {
			o.invalid = fmt.Errorf("park path %q: %w", parkPath, err)
		}
		o.parkPath = parkPath
	}
}

// WithErrorHandler sets fn to hear what Consume handles without returning:
// a consume function's error (wrapping ErrConsumer), a corrupt item
// (ErrCorruptItem), a lost item lock (ErrItemLost, ErrFenced), a ZooKeeper
// error it pauses and retries after. fn runs on the consuming goroutine and
// should return quickly. The default drops them (they are logged at the
// client's logger, debug level).
func WithErrorHandler(fn func(error)) Option {
	return func(o *options) { o.onError = fn }
}

// WithConnectionStates sets fn to hear the client's connection states, in
// order, while Consume runs (CURATOR-336: Curator's consumers are never
// told). A consumer takes no new item while the client is Suspended or
// Lost; with a lock path, an item being consumed is ended (Item.Done) when
// the client's ErrorPolicy counts the state as an error.
func WithConnectionStates(fn func(connstate.State)) Option {
	return func(o *options) { o.onState = fn }
}
