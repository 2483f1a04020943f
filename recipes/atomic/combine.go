package atomic

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/gocurator/curator/framework"
)

// adder combines the adds that goroutines of one process make at once to
// one counter (one client, path and set of options): while a write is in
// flight, the adds that arrive queue, and the first of them to have the
// turn writes their sum as one update (one read and one versioned write,
// stamped as every update is). Each caller is told its own place in the
// sum, as if the adds had been applied one after another in queue order.
//
// A batch shares its fate: applied, not applied (contention outlasting the
// retry policy) or failed together. The one exception keeps a caller's ctx
// its own: a batch whose write ended because some member's ctx ended (or
// the writing handle was closed), with nothing applied, goes again without
// those members, and they are told their own ctx's error (ErrClosed).
type adder[T int32 | int64] struct {
	key  adderKey
	turn chan struct{} // held by the caller that writes a batch

	mu      sync.Mutex
	pending []*addReq[T] // in arrival order; guarded by mu
	users   int          // calls in progress; guarded by adders.mu
}

// addReq is one caller's add, queued or in a batch.
type addReq[T int32 | int64] struct {
	ctx   context.Context
	k     *core // the caller's handle
	delta T

	taken bool // in a batch being written; guarded by adder.mu
	done  chan struct{}
	res   Result[T]
	err   error
}

// adderKey names the counter and the options an add runs under: only adds
// whose updates would run alike are combined.
type adderKey struct {
	c           *framework.Client
	path        string
	size        int
	lockPath    string
	lockTimeout time.Duration
	policy      any
	promoted    any
	// own is the handle itself when a policy cannot be compared: its adds
	// are combined with its own only.
	own *core
}

// adders holds the adders of the calls in progress; an entry goes when its
// last call returns.
var adders = struct {
	sync.Mutex
	m map[adderKey]any
}{m: map[adderKey]any{}}

// keyOf returns the key of k's adds. Policies are compared as values
// where they can be; the client's policy (the default) stands for itself;
// a handle with a policy that cannot be compared combines its own adds.
func keyOf[T int32 | int64](k *core) adderKey {
	key := adderKey{c: k.c, path: k.path, size: size[T](), lockPath: k.opts.lockPath,
		lockTimeout: k.opts.lockTimeout, policy: k.opts.policy, promoted: k.opts.promotedPolicy}
	if k.opts.clientPolicy {
		key.policy = clientPolicy{}
	}
	if k.opts.samePromoted {
		key.promoted = samePolicy{}
	}
	if !canCompare(key.policy) || !canCompare(key.promoted) {
		key.policy, key.promoted, key.own = nil, nil, k
	}
	return key
}

// clientPolicy and samePolicy stand in a key for the client's retry
// policy and for a promoted policy that is the optimistic one.
type (
	clientPolicy struct{}
	samePolicy   struct{}
)

func canCompare(v any) bool { return v == nil || reflect.TypeOf(v).Comparable() }

// acquireAdder returns the adder of k's counter, counting the caller as a
// user until releaseAdder.
func acquireAdder[T int32 | int64](k *core) *adder[T] {
	key := keyOf[T](k)
	adders.Lock()
	defer adders.Unlock()
	a, _ := adders.m[key].(*adder[T])
	if a == nil {
		a = &adder[T]{key: key, turn: make(chan struct{}, 1)}
		adders.m[key] = a
	}
	a.users++
	return a
}

func releaseAdder[T int32 | int64](a *adder[T]) {
	adders.Lock()
	defer adders.Unlock()
	if a.users--; a.users == 0 {
		delete(adders.m, a.key)
	}
}

// add adds delta to k's counter, combined with the adds of this process
// that are queued with it, and returns the caller's own Result.
func add[T int32 | int64](ctx context.Context, k *core, delta T) (Result[T], error) {
	if err := k.usable(ctx); err != nil {
		return Result[T]{}, err
	}
	a := acquireAdder[T](k)
	defer releaseAdder(a)
	r := &addReq[T]{ctx: ctx, k: k, delta: delta, done: make(chan struct{})}
	a.mu.Lock()
	a.pending = append(a.pending, r)
	a.mu.Unlock()
	for {
		select {
		case <-r.done:
			return r.res, r.err
		case a.turn <- struct{}{}:
			if batch := a.take(); len(batch) > 0 {
				a.write(k, batch)
			}
			<-a.turn
		case <-ctx.Done():
			return a.leave(r, ctx.Err())
		case <-k.closed:
			return a.leave(r, ErrClosed)
		}
	}
}

// leave withdraws r, not yet in a batch, with err; one already in a batch
// is waited for: its write is answered (within the write grace) and its
// outcome told, which never sends r again (its ctx, or handle, has ended).
func (a *adder[T]) leave(r *addReq[T], err error) (Result[T], error) {
	a.mu.Lock()
	if !r.taken {
		a.pending = removeReq(a.pending, r)
		a.mu.Unlock()
		return Result[T]{}, err
	}
	a.mu.Unlock()
	<-r.done
	return r.res, r.err
}

func removeReq[T int32 | int64](q []*addReq[T], r *addReq[T]) []*addReq[T] {
	for i, x := range q {
		if x == r {
			return append(q[:i], q[i+1:]...)
		}
	}
	return q
}

// take returns the queued adds as the next batch, each marked taken; an
// add whose ctx or handle has ended is told so instead.
func (a *adder[T]) take() []*addReq[T] {
	a.mu.Lock()
	defer a.mu.Unlock()
	batch := make([]*addReq[T], 0, len(a.pending))
	for _, r := range a.pending {
		if err := r.gone(); err != nil {
			r.finish(Result[T]{}, err)
			continue
		}
		r.taken = true
		batch = append(batch, r)
	}
	a.pending = a.pending[:0]
	return batch
}

// gone returns why r may no longer be sent: its ctx's error, or ErrClosed.
func (r *addReq[T]) gone() error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	return r.k.open()
}

func (r *addReq[T]) finish(res Result[T], err error) {
	r.res, r.err = res, err
	close(r.done)
}

// write applies batch's sum through k's update loop and tells each member
// its outcome. A write that ended, with nothing applied, because a member's
// ctx or handle ended puts the others back at the head of the queue (only
// then: an error no member caused is everyone's).
func (a *adder[T]) write(k *core, batch []*addReq[T]) {
	var sum T
	for _, r := range batch {
		sum += r.delta
	}
	bctx, release := anyEnded(batch)
	raw, err := k.update(bctx, func(pre []byte) ([]byte, error) {
		v, err := decode[T](pre)
		if err != nil {
			return nil, err
		}
		return encode(v + sum), nil
	})
	release()
	res := result[T](raw)
	switch {
	case err == nil && res.Succeeded:
		v := res.PreValue
		for _, r := range batch {
			r.finish(Result[T]{Succeeded: true, PreValue: v, PostValue: v + r.delta, Stats: res.Stats}, nil)
			v += r.delta
		}
	case err == nil:
		for _, r := range batch {
			r.finish(Result[T]{PreValue: res.PreValue, Stats: res.Stats}, nil)
		}
	case notApplied(err) && slices.ContainsFunc(batch, func(r *addReq[T]) bool { return r.gone() != nil }):
		var again []*addReq[T]
		for _, r := range batch {
			if gerr := r.gone(); gerr != nil {
				r.finish(Result[T]{Stats: res.Stats}, gerr)
			} else {
				again = append(again, r)
			}
		}
		a.mu.Lock()
		for _, r := range again {
			r.taken = false
		}
		a.pending = append(again, a.pending...)
		a.mu.Unlock()
	default:
		for _, r := range batch {
			r.finish(res, err)
		}
	}
}

// notApplied reports whether err ended an update with nothing written: its
// ctx ended (with no write whose outcome is unknown) or its handle closed.
func notApplied(err error) bool {
	if errors.Is(err, ErrUnknownOutcome) {
		return false
	}
	return errors.Is(err, ErrClosed) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// anyEnded returns a context that ends when any member's ctx does, with the
// first member's values (a trace span, say); release frees it.
func anyEnded[T int32 | int64](batch []*addReq[T]) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(batch[0].ctx))
	stops := make([]func() bool, len(batch))
	for i, r := range batch {
		stops[i] = context.AfterFunc(r.ctx, cancel)
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}
