package atomic

import (
	"bytes"
	"context"

	"github.com/gocurator/curator/framework"
)

// Value is a distributed atomic byte value, Curator's
// DistributedAtomicValue: the node's raw data, updated optimistically and
// exactly once (see the package documentation). A Value is safe for
// concurrent use; its updates run one at a time. Close it when done: it
// deletes the handle's writer child. A nil *Value returns ErrNilHandle.
type Value struct {
	k *core
}

// NewValue returns the atomic value at path. It does no I/O; a nil client
// or an invalid path (or lock path) is reported by every call.
func NewValue(c *framework.Client, path string, opts ...Option) *Value {
	return &Value{k: newCore(c, path, opts)}
}

// Path returns the node's path.
func (v *Value) Path() string {
	if v == nil {
		return ""
	}
	return v.k.path
}

// Close ends the handle as Number.Close does: later calls fail with
// ErrClosed, an update in progress is waited for on ctx, and the handle's
// writer child is deleted (in the background if the connection is down or
// ctx ends first, that error returned). Idempotent; nil-safe.
func (v *Value) Close(ctx context.Context) error {
	if v == nil {
		return nil
	}
	if err := v.k.close(ctx); err != nil {
		return v.k.wrap("close", err)
	}
	return nil
}

// notNil keeps nil data from meaning the client's default data.
func notNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// Get reads the value: nil when the node is missing.
func (v *Value) Get(ctx context.Context) ([]byte, error) {
	if v == nil {
		return nil, ErrNilHandle
	}
	if v.k.err != nil {
		return nil, v.k.wrap("get", v.k.err)
	}
	if err := v.k.open(); err != nil {
		return nil, v.k.wrap("get", err)
	}
	data, _, err := v.k.read(ctx)
	if err != nil {
		return nil, v.k.wrap("get", err)
	}
	return data, nil
}

// TrySet sets the value to b through the update loop (Curator's trySet).
func (v *Value) TrySet(ctx context.Context, b []byte) (Result[[]byte], error) {
	if v == nil {
		return Result[[]byte]{}, ErrNilHandle
	}
	b = notNil(b)
	r, err := v.k.update(ctx, func([]byte) ([]byte, error) { return b, nil })
	if err != nil {
		return r, v.k.wrap("trySet", err)
	}
	return r, nil
}

// CompareAndSet sets the value to b only if it is expected now, byte for
// byte, in one try (Curator's compareAndSet); a missing node never matches.
func (v *Value) CompareAndSet(ctx context.Context, expected, b []byte) (Result[[]byte], error) {
	if v == nil {
		return Result[[]byte]{}, ErrNilHandle
	}
	if v.k.err != nil {
		return Result[[]byte]{}, v.k.wrap("compareAndSet", v.k.err)
	}
	r, err := v.k.compareAndSet(ctx, func(cur []byte) (bool, error) {
		return bytes.Equal(cur, expected), nil
	}, notNil(b))
	if err != nil {
		return r, v.k.wrap("compareAndSet", err)
	}
	return r, nil
}

// ForceSet sets the value to b whatever it is (Curator's forceSet).
func (v *Value) ForceSet(ctx context.Context, b []byte) error {
	if v == nil {
		return ErrNilHandle
	}
	if err := v.k.forceSet(ctx, notNil(b)); err != nil {
		return v.k.wrap("forceSet", err)
	}
	return nil
}

// Initialize makes the node with b if it does not exist, and reports
// whether it did (Curator's initialize).
func (v *Value) Initialize(ctx context.Context, b []byte) (bool, error) {
	if v == nil {
		return false, ErrNilHandle
	}
	ok, err := v.k.initialize(ctx, notNil(b))
	if err != nil {
		return false, v.k.wrap("initialize", err)
	}
	return ok, nil
}
