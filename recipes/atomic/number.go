package atomic

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/gocurator/curator/framework"
)

// Number is a distributed atomic integer: Curator's DistributedAtomicLong
// (Long, 8 bytes) or DistributedAtomicInteger (Int, 4 bytes), big-endian in
// one node. Every Number on one path, in Go or Java, sees one value.
//
// Updates are optimistic and exactly-once (see the package documentation);
// those that return a Result report contention that outlasted the retry
// policies as Succeeded false with a nil error. A Number is safe for
// concurrent use; its updates run one at a time, and concurrent adds are
// combined into shared writes (see TryAdd). A nil *Number returns
// ErrNilHandle.
type Number[T int32 | int64] struct {
	k *core
}

// Long is Curator's DistributedAtomicLong: an int64 stored as 8 bytes
// big-endian. Its methods are Number's, documented there (go doc
// atomic.Number.Add; "go doc atomic.Long.Add" cannot follow the alias):
// Get, Add, TryAdd, Subtract, Increment, Decrement, TrySet, CompareAndSet,
// ForceSet, Initialize, Path and Close.
type Long = Number[int64]

// Int is Curator's DistributedAtomicInteger: an int32 stored as 4 bytes
// big-endian. Its methods are Number's, as Long's are (go doc
// atomic.Number).
type Int = Number[int32]

// NewLong returns the atomic long at path. It does no I/O; a nil client or
// an invalid path (or lock path) is reported by every call.
func NewLong(c *framework.Client, path string, opts ...Option) *Long {
	return &Long{k: newCore(c, path, opts)}
}

// NewInt returns the atomic int at path. It does no I/O; a nil client or
// an invalid path (or lock path) is reported by every call.
func NewInt(c *framework.Client, path string, opts ...Option) *Int {
	return &Int{k: newCore(c, path, opts)}
}

// Path returns the node's path.
func (n *Number[T]) Path() string {
	if n == nil {
		return ""
	}
	return n.k.path
}

// Close ends the handle: later calls, and calls waiting for their turn,
// fail with ErrClosed; an update in progress is waited for on ctx; then
// the handle's writer child is deleted, so that the value's node is left
// alone and a plain delete of it (Curator's delete().forPath) succeeds.
// Only a child that may exist in the client's live session is deleted (one
// made in an earlier session went with it); its name is this handle's own.
// If the connection is down, or ctx ends first (waiting for the update
// too), the delete goes on in the background (framework.Guaranteed: until
// it succeeds or the client closes; the child also goes with its session)
// and Close returns that error. Close is idempotent: calls after the first return nil, and a
// nil *Number's Close returns nil. Close does not delete the value.
func (n *Number[T]) Close(ctx context.Context) error {
	if n == nil {
		return nil
	}
	if err := n.k.close(ctx); err != nil {
		return n.k.wrap("close", err)
	}
	return nil
}

func size[T int32 | int64]() int {
	var v T
	switch any(v).(type) {
	case int32:
		return 4
	default:
		return 8
	}
}

func decode[T int32 | int64](b []byte) (T, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n := size[T]()
	switch {
	case n == 8 && len(b) == 4:
		return 0, fmt.Errorf("%w: %w: 4 bytes, a DistributedAtomicInteger's or a SharedCount's value; a Long is 8", ErrLayoutMismatch, ErrMalformed)
	case len(b) < n:
		return 0, fmt.Errorf("%w: %d bytes, want %d", ErrMalformed, len(b), n)
	case n == 4 && len(b) == 8:
		// Curator's Integer reads the long's high half as the value.
		return 0, fmt.Errorf("%w: 8 bytes, a DistributedAtomicLong's value; an Int is 4", ErrLayoutMismatch)
	}
	if n == 4 {
		return T(int32(binary.BigEndian.Uint32(b))), nil
	}
	return T(int64(binary.BigEndian.Uint64(b))), nil
}

func encode[T int32 | int64](v T) []byte {
	b := make([]byte, size[T]())
	if len(b) == 4 {
		binary.BigEndian.PutUint32(b, uint32(int32(v)))
	} else {
		binary.BigEndian.PutUint64(b, uint64(int64(v)))
	}
	return b
}

// result decodes a byte Result; the values were decoded (or encoded) once
// already, so they decode.
func result[T int32 | int64](r Result[[]byte]) Result[T] {
	out := Result[T]{Succeeded: r.Succeeded, Stats: r.Stats}
	out.PreValue, _ = decode[T](r.PreValue)
	if r.Succeeded {
		out.PostValue, _ = decode[T](r.PostValue)
	}
	return out
}

// Get reads the value: 0 when the node is missing or empty.
func (n *Number[T]) Get(ctx context.Context) (T, error) {
	if n == nil {
		return 0, ErrNilHandle
	}
	if n.k.err != nil {
		return 0, n.k.wrap("get", n.k.err)
	}
	if err := n.k.open(); err != nil {
		return 0, n.k.wrap("get", err)
	}
	data, _, err := n.k.read(ctx)
	if err != nil {
		return 0, n.k.wrap("get", err)
	}
	v, err := decode[T](data)
	if err != nil {
		return 0, n.k.wrap("get", err)
	}
	return v, nil
}

// Add adds delta and returns the value after. When the update did not
// happen (contention outlasted the retry policies) the error wraps
// ErrNotApplied; any other failure is returned as is. Integer overflow
// wraps around, as in Java.
func (n *Number[T]) Add(ctx context.Context, delta T) (T, error) {
	r, err := n.TryAdd(ctx, delta)
	if err != nil {
		return 0, err
	}
	if !r.Succeeded {
		return 0, n.k.wrap("add", fmt.Errorf("%w after %d optimistic and %d promoted tries",
			ErrNotApplied, r.Stats.OptimisticTries, r.Stats.PromotedTries))
	}
	return r.PostValue, nil
}

// TryAdd adds delta (Curator's add) and returns the Result.
//
// The adds that goroutines of this process make to one counter at once
// (through this handle or others of the same client, path and options)
// share one write: those that arrive while a write is in flight go out
// together as their sum, one read and one stamped, versioned write, and
// each call's Result is its own, as if the adds had been applied one after
// another (PreValue and PostValue around its own delta; Stats those of the
// shared write). A combined write is applied once or not at all, for all
// of its adds alike, with one exception that keeps each ctx its own: an
// add whose ctx ends (or whose handle is closed) before its write is sent
// is not applied and returns that error, and a write that ended unapplied
// for that reason is sent again without it.
func (n *Number[T]) TryAdd(ctx context.Context, delta T) (Result[T], error) {
	if n == nil {
		return Result[T]{}, ErrNilHandle
	}
	r, err := add(ctx, n.k, delta)
	if err != nil {
		return r, n.k.wrap("add", err)
	}
	return r, nil
}

// Subtract subtracts delta (Curator's subtract).
func (n *Number[T]) Subtract(ctx context.Context, delta T) (Result[T], error) {
	return n.TryAdd(ctx, -delta)
}

// Increment adds one (Curator's increment).
func (n *Number[T]) Increment(ctx context.Context) (Result[T], error) {
	return n.TryAdd(ctx, 1)
}

// Decrement subtracts one (Curator's decrement).
func (n *Number[T]) Decrement(ctx context.Context) (Result[T], error) {
	return n.TryAdd(ctx, -1)
}

// TrySet sets the value to v through the update loop (Curator's trySet):
// it succeeds unless contention outlasts the retry policies.
func (n *Number[T]) TrySet(ctx context.Context, v T) (Result[T], error) {
	if n == nil {
		return Result[T]{}, ErrNilHandle
	}
	data := encode(v)
	r, err := n.k.update(ctx, func(pre []byte) ([]byte, error) {
		if _, err := decode[T](pre); err != nil {
			return nil, err
		}
		return data, nil
	})
	if err != nil {
		return result[T](r), n.k.wrap("trySet", err)
	}
	return result[T](r), nil
}

// CompareAndSet sets the value to v only if it is expected now, in one try
// (Curator's compareAndSet); a missing node never matches. The comparison
// is of numbers, so an empty node matches 0 (Curator compares the bytes).
func (n *Number[T]) CompareAndSet(ctx context.Context, expected, v T) (Result[T], error) {
	if n == nil {
		return Result[T]{}, ErrNilHandle
	}
	if n.k.err != nil {
		return Result[T]{}, n.k.wrap("compareAndSet", n.k.err)
	}
	r, err := n.k.compareAndSet(ctx, func(cur []byte) (bool, error) {
		got, err := decode[T](cur)
		return got == expected, err
	}, encode(v))
	if err != nil {
		return result[T](r), n.k.wrap("compareAndSet", err)
	}
	return result[T](r), nil
}

// ForceSet sets the value to v whatever it is (Curator's forceSet),
// making the node if it is missing.
func (n *Number[T]) ForceSet(ctx context.Context, v T) error {
	if n == nil {
		return ErrNilHandle
	}
	if err := n.k.forceSet(ctx, encode(v)); err != nil {
		return n.k.wrap("forceSet", err)
	}
	return nil
}

// Initialize makes the node with v if it does not exist, and reports
// whether it did (Curator's initialize).
func (n *Number[T]) Initialize(ctx context.Context, v T) (bool, error) {
	if n == nil {
		return false, ErrNilHandle
	}
	ok, err := n.k.initialize(ctx, encode(v))
	if err != nil {
		return false, n.k.wrap("initialize", err)
	}
	return ok, nil
}
