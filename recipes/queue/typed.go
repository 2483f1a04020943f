package queue

import (
	"context"
	"encoding/json"
	"fmt"
)

// Codec turns values into item bytes and back: Curator's QueueSerializer.
// Items stay []byte on the wire (and in Curator's framing), so a Java
// consumer with the matching serializer reads them.
type Codec[T any] interface {
	Encode(v T) ([]byte, error)
	Decode(b []byte) (T, error)
}

// JSON is a Codec that encodes values with encoding/json.
type JSON[T any] struct{}

// Encode returns v as JSON.
func (JSON[T]) Encode(v T) ([]byte, error) { return json.Marshal(v) }

// Decode reads a T from JSON.
func (JSON[T]) Decode(b []byte) (T, error) {
	var v T
	err := json.Unmarshal(b, &v)
	return v, err
}

// Typed is a Queue of values of T, encoded by a Codec: Put and PutMulti
// take values, Consume hands them over decoded. The variants (id,
// priority, delay) take bytes; encode with the same Codec for them.
type Typed[T any] struct {
	q     *Queue
	codec Codec[T]
}

// NewTyped returns q with values of T encoded by codec. It does no I/O.
func NewTyped[T any](q *Queue, codec Codec[T]) *Typed[T] {
	return &Typed[T]{q: q, codec: codec}
}

// Queue returns the queue of bytes underneath, for what Typed does not
// wrap (PutAsync, Flush, Close).
func (t *Typed[T]) Queue() *Queue { return t.q }

// Put encodes v and puts it (Queue.Put). A value the codec refuses is
// an error wrapping ErrInvalidOption, and nothing is written.
func (t *Typed[T]) Put(ctx context.Context, v T) error {
	b, err := t.encode(v)
	if err != nil {
		return err
	}
	return t.q.Put(ctx, b)
}

// PutMulti encodes vs and puts them in one node (Queue.PutMulti).
func (t *Typed[T]) PutMulti(ctx context.Context, vs []T) error {
	items := make([][]byte, len(vs))
	for i, v := range vs {
		b, err := t.encode(v)
		if err != nil {
			return err
		}
		items[i] = b
	}
	return t.q.PutMulti(ctx, items)
}

func (t *Typed[T]) encode(v T) ([]byte, error) {
	if t == nil || t.q == nil || t.codec == nil {
		return nil, fmt.Errorf("queue: typed put: %w", ErrNilHandle)
	}
	b, err := t.codec.Encode(v)
	if err != nil {
		return nil, fmt.Errorf("queue %s: typed put: encode: %w: %w", t.q.path, ErrInvalidOption, err)
	}
	return b, nil
}

// Consume is Queue.Consume with each item decoded: fn gets the value and
// the Item (its name, fence, and raw Data). An item that does not decode
// is never handed to fn: it is consumed as failed, its error wrapping
// ErrCorruptItem goes to the error handler, and it is dropped, not
// requeued whatever the error mode (a value no consumer can read would
// come back for ever).
func (t *Typed[T]) Consume(ctx context.Context, fn func(ctx context.Context, v T, it Item) error) error {
	if t == nil || t.q == nil || t.codec == nil {
		return fmt.Errorf("queue: typed consume: %w", ErrNilHandle)
	}
	if fn == nil {
		return t.q.Consume(ctx, nil) // the queue's own error for a nil fn
	}
	return t.q.Consume(ctx, func(ctx context.Context, it Item) error {
		v, err := t.codec.Decode(it.Data)
		if err != nil {
			return fmt.Errorf("decode: %w: %w", ErrCorruptItem, err)
		}
		return fn(ctx, v, it)
	})
}
