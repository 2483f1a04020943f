package shared

import (
	"context"
	"fmt"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/fanout"
)

// Count is a shared integer on ZooKeeper (Curator's SharedCount): a
// PERSISTENT node whose data is a 4-byte big-endian signed int. Every Count
// on the same path, in Go or in Java, sees the same value. As in Curator,
// a Count is a Value whose bytes are the integer: it reads, writes, caches
// and watches through one.
//
// Get, GetVersioned, Set and TrySet talk to ZooKeeper on every call. Start
// additionally keeps a cached copy current with a watch, which Value, Watch
// and Listen read; Close stops it. A Count is safe for concurrent use.
type Count struct {
	v    *Value
	seed int
}

// NewCount returns a count at path whose node is created with seed when it
// does not exist. It does no I/O: a nil client, an invalid path (or the
// root) or a seed outside the int32 range is reported by every later call
// (ErrNilClient, ErrInvalidPath, ErrOutOfRange).
func NewCount(c *framework.Client, path string, seed int) *Count {
	data, err := encode(seed)
	if err != nil {
		err = fmt.Errorf("%w: seed %d", ErrOutOfRange, seed)
	}
	return &Count{v: newValue(c, path, data, "sharedcount", accept, err), seed: seed}
}

// accept refuses data that is not a count.
func accept(data []byte) error {
	_, err := decode(data)
	return err
}

// Path returns the count's node path.
func (n *Count) Path() string {
	if n == nil {
		return ""
	}
	return n.v.Path()
}

// Start creates the node with the seed if it is missing, reads the value
// and keeps watching it, so that Value, Watch and Listen follow every
// change. It blocks until the first read is done or ctx ends; on failure
// nothing is left running. Start on a started count returns nil at once;
// after Close it returns ErrClosed. The watch lives until Close, or until
// the client is closed.
func (n *Count) Start(ctx context.Context) error {
	if n == nil {
		return ErrNilHandle
	}
	return n.v.Start(ctx)
}

// Close stops the watch started by Start and every listener, and waits for
// their goroutines (listeners get what was queued first). It must not be
// called from a listener. The node stays. Close is idempotent; Get, Set and
// TrySet keep working after it.
func (n *Count) Close() error {
	if n == nil {
		return nil
	}
	return n.v.Close()
}

// Get reads the count from ZooKeeper, creating the node with the seed if it
// is missing.
func (n *Count) Get(ctx context.Context) (int, error) {
	if n == nil {
		return 0, ErrNilHandle
	}
	v, err := n.GetVersioned(ctx)
	return v.Value, err
}

// GetVersioned reads the count and its version from ZooKeeper, creating the
// node with the seed if it is missing. Pass the result to TrySet.
func (n *Count) GetVersioned(ctx context.Context) (VersionedValue, error) {
	if n == nil {
		return VersionedValue{}, ErrNilHandle
	}
	vv, err := n.v.GetVersioned(ctx)
	if err != nil {
		return VersionedValue{}, err
	}
	return n.count(vv), nil
}

// Set writes v whatever the current value (Curator's setCount), creating
// the node if it is missing. v must fit an int32 (ErrOutOfRange).
func (n *Count) Set(ctx context.Context, v int) error {
	if n == nil {
		return ErrNilHandle
	}
	if n.v.err != nil {
		return n.v.wrap("set", n.v.err)
	}
	data, err := encode(v)
	if err != nil {
		return n.v.wrap("set", err)
	}
	return n.v.Set(ctx, data)
}

// TrySet writes v only if the count is still at prev's version (Curator's
// trySetCount): it returns false, and writes nothing, when another write
// came first or the node was deleted since prev was read. prev comes from
// GetVersioned, Versioned or Watch; a negative version never matches. v
// must fit an int32 (ErrOutOfRange).
func (n *Count) TrySet(ctx context.Context, prev VersionedValue, v int) (bool, error) {
	if n == nil {
		return false, ErrNilHandle
	}
	if n.v.err != nil {
		return false, n.v.wrap("trySet", n.v.err)
	}
	data, err := encode(v)
	if err != nil {
		return false, n.v.wrap("trySet", err)
	}
	return n.v.trySet(ctx, prev.Version, data)
}

// Value returns the cached count: the latest value seen since Start (or by
// any call of this Count), the seed before anything was read.
func (n *Count) Value() int { return n.Versioned().Value }

// Versioned returns the cached count with its version (-1 before anything
// was read).
func (n *Count) Versioned() VersionedValue {
	if n == nil {
		return VersionedValue{}
	}
	return n.count(n.v.Versioned())
}

// Watch returns the cached count and a channel that is closed when the
// cached count next changes, both taken at one instant, so a change between
// reading the value and waiting on the channel is never missed.
func (n *Count) Watch() (VersionedValue, <-chan struct{}) {
	if n == nil {
		return VersionedValue{}, fanout.Closed()
	}
	vv, ch := n.v.Watch()
	return n.count(vv), ch
}

// Listen calls fn with every new value the count sees from now on (every
// new version, as Curator's SharedCountListener), in version order, on a
// goroutine of fn's own. Each change is read after its event, so values
// written in quick succession may be seen only as the last of them.
// cancel stops further calls and does not block; Close stops all
// listeners.
func (n *Count) Listen(fn func(v int)) (cancel func()) {
	if n == nil || fn == nil {
		return func() {}
	}
	// The Value caches only data its accept took: it decodes.
	return n.v.subs.Add(func(data []byte) {
		v, _ := decode(data)
		fn(v)
	})
}

// count decodes a versioned value of the Value under n. Only the seed of a
// count made with an out-of-range seed (whose every call fails) does not
// decode: it reads as that seed.
func (n *Count) count(vv Versioned[[]byte]) VersionedValue {
	v, err := decode(vv.Value)
	if err != nil {
		v = n.seed
	}
	return VersionedValue{Version: vv.Version, Value: v}
}
