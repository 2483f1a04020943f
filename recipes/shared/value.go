package shared

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/fanout"
	"github.com/gocurator/curator/internal/writegrace"
	"github.com/gocurator/curator/retry"
)

// Value is a shared byte string on ZooKeeper (Curator's SharedValue): a
// PERSISTENT node whose data is the value. Every Value on the same path, in
// Go or in Java, sees the same bytes. Count is a Value holding a 4-byte
// integer.
//
// Get, GetVersioned, Set and TrySet talk to ZooKeeper on every call. Start
// additionally keeps a cached copy current with a watch, which Cached,
// Versioned, Watch and Listen read; Close stops it. A Value is safe for
// concurrent use. Byte slices passed in are copied; byte slices handed out
// (by Get, Cached, Versioned, Watch and to listeners) belong to the caller.
type Value struct {
	c    *framework.Client
	path string
	seed []byte
	err  error // bad input found by the constructor, returned by every call
	// kind names the recipe in errors and logs: "sharedvalue", or
	// "sharedcount" for the Value under a Count.
	kind string
	// accept says whether data read from the node is a value of this
	// recipe (a Count's needs 4 bytes); nil accepts any data. Data it
	// refuses fails Get and is never cached.
	accept func([]byte) error
	log    *zap.Logger
	subs   fanout.Fanout[[]byte]

	starting chan struct{} // 1-buffered: held by the Start doing I/O

	mu      sync.Mutex
	started bool
	closed  bool
	cur     Versioned[[]byte]
	czxid   int64         // of the node cur was read from; 0 for the seed
	changed fanout.Signal // notified when cur changes
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// NewValue returns a shared value at path whose node is created with seed
// when it does not exist (nil seed: empty data). It does no I/O: a nil
// client or an invalid path (or the root) is reported by every later call
// (ErrNilClient, ErrInvalidPath).
func NewValue(c *framework.Client, path string, seed []byte) *Value {
	return newValue(c, path, seed, "sharedvalue", nil, nil)
}

// newValue is NewValue for a recipe built on Value: kind names it in errors
// and logs, accept checks data read from the node, and err (bad input the
// recipe found) is reported by every call.
func newValue(c *framework.Client, path string, seed []byte, kind string, accept func([]byte) error, err error) *Value {
	v := &Value{
		c: c, path: path, seed: clone(seed), kind: kind, accept: accept,
		log: zap.NewNop(), starting: make(chan struct{}, 1),
	}
	v.cur = Versioned[[]byte]{Version: -1, Value: v.seed}
	switch {
	case c == nil:
		v.err = ErrNilClient
	case err != nil:
		v.err = err
	default:
		if err := framework.ValidatePath(path); err != nil {
			v.err = err
		} else if path == "/" {
			v.err = fmt.Errorf("%w: a shared value cannot live at the root", ErrInvalidPath)
		}
	}
	if c != nil {
		v.log = c.Logger().Named(kind).With(zap.String("path", path))
	}
	return v
}

// Path returns the value's node path.
func (v *Value) Path() string {
	if v == nil {
		return ""
	}
	return v.path
}

// Start creates the node with the seed if it is missing, reads the value
// and keeps watching it, so that Cached, Versioned, Watch and Listen follow
// every change. It blocks until the first read is done or ctx ends; on
// failure nothing is left running. Start on a started value returns nil at
// once; after Close it returns ErrClosed. The watch lives until Close, or
// until the client is closed.
func (v *Value) Start(ctx context.Context) error {
	if v == nil {
		return ErrNilHandle
	}
	if v.err != nil {
		return v.wrap("start", v.err)
	}
	if ctx == nil {
		return v.wrap("start", fmt.Errorf("%w: nil context", framework.ErrInvalidOption))
	}
	if done, err := v.startedOrClosed(); done {
		return err
	}
	// Concurrent Starts wait for the one doing I/O, or for their ctx.
	select {
	case v.starting <- struct{}{}:
	case <-ctx.Done():
		return v.wrap("start", ctx.Err())
	}
	defer func() { <-v.starting }()
	if done, err := v.startedOrClosed(); done {
		return err
	}
	// The watch lives until Close: its context is not Start's, which only
	// bounds the setting up. Set before the read, it sees every change
	// after it.
	wctx, cancel := context.WithCancel(context.Background())
	stop := context.AfterFunc(ctx, cancel)
	w, err := v.c.Watch(wctx, v.path)
	if err != nil {
		stop()
		cancel()
		return v.wrap("start", err)
	}
	data, stat, err := v.read(ctx)
	if err == nil && !stop() {
		err = ctx.Err()
	}
	if err != nil {
		stop()
		cancel()
		_ = w.Close()
		return v.wrap("start", err)
	}
	v.mu.Lock()
	if v.closed {
		v.mu.Unlock()
		cancel()
		_ = w.Close()
		return v.wrap("start", ErrClosed)
	}
	v.started = true
	v.cancel = cancel
	v.wg.Add(1)
	v.updateLocked(stat, data)
	v.mu.Unlock()
	go v.follow(wctx, w)
	return nil
}

// startedOrClosed reports whether Start has nothing to do, and what it
// returns then.
func (v *Value) startedOrClosed() (bool, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	switch {
	case v.closed:
		return true, v.wrap("start", ErrClosed)
	case v.started:
		return true, nil
	}
	return false, nil
}

// Close stops the watch started by Start and every listener, and waits for
// their goroutines (listeners get what was queued first). It must not be
// called from a listener. The node stays. Close is idempotent; Get, Set and
// TrySet keep working after it.
func (v *Value) Close() error {
	if v == nil {
		return nil
	}
	v.mu.Lock()
	v.closed = true
	cancel := v.cancel
	v.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	v.wg.Wait()
	v.subs.Close()
	return nil
}

// Get reads the value from ZooKeeper, creating the node with the seed if it
// is missing.
func (v *Value) Get(ctx context.Context) ([]byte, error) {
	if v == nil {
		return nil, ErrNilHandle
	}
	vv, err := v.GetVersioned(ctx)
	return vv.Value, err
}

// GetVersioned reads the value and its version from ZooKeeper, creating the
// node with the seed if it is missing. Pass the result to TrySet.
func (v *Value) GetVersioned(ctx context.Context) (Versioned[[]byte], error) {
	if v == nil {
		return Versioned[[]byte]{}, ErrNilHandle
	}
	if v.err != nil {
		return Versioned[[]byte]{}, v.wrap("get", v.err)
	}
	data, stat, err := v.read(ctx)
	if err != nil {
		return Versioned[[]byte]{}, v.wrap("get", err)
	}
	v.update(stat, data)
	return Versioned[[]byte]{Version: stat.Version, Value: data}, nil
}

// Set writes data whatever the current value (Curator's setValue),
// creating the node if it is missing. A write in flight when ctx ends is
// waited for up to a second more, so that its outcome is known: nil if it
// was applied, and a cancelled Set never lands after the call returned
// (over a later Set, say).
func (v *Value) Set(ctx context.Context, data []byte) error {
	if v == nil {
		return ErrNilHandle
	}
	if v.err != nil {
		return v.wrap("set", v.err)
	}
	data = clone(data)
	for {
		wctx, done := writegrace.Context(ctx)
		stat, err := v.c.Set(wctx, v.path, data, -1)
		err = done(err)
		if err == nil {
			v.update(stat, data)
			return nil
		}
		if !errors.Is(err, zk.ErrNoNode) {
			return v.wrap("set", err)
		}
		wctx, done = writegrace.Context(ctx)
		_, err = v.c.Create(wctx, v.path, data, framework.CreatingParentContainers())
		err = done(err)
		if err == nil {
			// Create returns no Stat: read the node back for the cache.
			if got, stat, err := v.read(ctx); err == nil {
				v.update(stat, got)
			}
			return nil
		}
		if !errors.Is(err, zk.ErrNodeExists) {
			return v.wrap("set", err)
		}
		// Made by someone else meanwhile: overwrite it.
	}
}

// TrySet writes data only if the node is still at prev's version
// (Curator's trySetValue): it returns false, and writes nothing, when
// another write came first or the node was deleted since prev was read.
// prev comes from GetVersioned, Versioned or Watch; a negative version
// never matches. Unlike Curator's, it needs no Start: the server compares
// the version, not a cached copy.
func (v *Value) TrySet(ctx context.Context, prev Versioned[[]byte], data []byte) (bool, error) {
	if v == nil {
		return false, ErrNilHandle
	}
	if v.err != nil {
		return false, v.wrap("trySet", v.err)
	}
	return v.trySet(ctx, prev.Version, clone(data))
}

// trySet writes data (owned by the callee) at version.
func (v *Value) trySet(ctx context.Context, version int32, data []byte) (bool, error) {
	if version < 0 {
		// -1 would mean "any version" to ZooKeeper.
		return false, nil
	}
	wctx, done := writegrace.Context(ctx)
	stat, err := v.c.Set(wctx, v.path, data, version)
	err = done(err)
	switch {
	case err == nil:
		v.update(stat, data)
		return true, nil
	case errors.Is(err, zk.ErrBadVersion), errors.Is(err, zk.ErrNoNode):
		return false, nil
	default:
		return false, v.wrap("trySet", err)
	}
}

// Cached returns the cached value: the latest seen since Start (or by any
// call of this Value), the seed before anything was read.
func (v *Value) Cached() []byte { return v.Versioned().Value }

// Versioned returns the cached value with its version (-1 before anything
// was read).
func (v *Value) Versioned() Versioned[[]byte] {
	if v == nil {
		return Versioned[[]byte]{}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return Versioned[[]byte]{Version: v.cur.Version, Value: clone(v.cur.Value)}
}

// Watch returns the cached value and a channel that is closed when the
// cached value next changes, both taken at one instant, so a change between
// reading the value and waiting on the channel is never missed.
func (v *Value) Watch() (Versioned[[]byte], <-chan struct{}) {
	if v == nil {
		return Versioned[[]byte]{}, fanout.Closed()
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return Versioned[[]byte]{Version: v.cur.Version, Value: clone(v.cur.Value)}, v.changed.C()
}

// Listen calls fn with every new value the Value sees from now on (every
// new version, as Curator's SharedValueListener), in version order, on a
// goroutine of fn's own; each call gets a slice of its own. Each change is
// read after its event, so values written in quick succession may be seen
// only as the last of them. cancel stops further calls and does not block;
// Close stops all listeners.
func (v *Value) Listen(fn func(data []byte)) (cancel func()) {
	if v == nil || fn == nil {
		return func() {}
	}
	return v.subs.Add(func(data []byte) { fn(clone(data)) })
}

// update caches data read with stat if it is newer than the cached value.
func (v *Value) update(stat *zk.Stat, data []byte) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.updateLocked(stat, data)
}

// updateLocked orders reads by node incarnation (czxid), then by data
// version: a node deleted and made again restarts at version 0. data is
// kept, so callers pass a slice nobody else writes to.
func (v *Value) updateLocked(stat *zk.Stat, data []byte) {
	if stat == nil {
		return
	}
	newer := stat.Czxid > v.czxid || (stat.Czxid == v.czxid && stat.Version > v.cur.Version)
	if !newer {
		return
	}
	v.czxid = stat.Czxid
	v.cur = Versioned[[]byte]{Version: stat.Version, Value: data}
	v.changed.Notify()
	v.subs.Publish(data)
	v.log.Debug("value changed", zap.Int("bytes", len(data)), zap.Int32("version", stat.Version))
}

// read reads the node, creating it with the seed when missing. Data that
// accept refuses is an error.
func (v *Value) read(ctx context.Context) ([]byte, *zk.Stat, error) {
	for {
		data, stat, err := v.c.Get(ctx, v.path)
		if err == nil {
			if err := v.layout(ctx, stat); err != nil {
				return nil, nil, err
			}
			if v.accept != nil {
				if err := v.accept(data); err != nil {
					return nil, nil, err
				}
			}
			return data, stat, nil
		}
		if !errors.Is(err, zk.ErrNoNode) {
			return nil, nil, err
		}
		if err := v.create(ctx); err != nil {
			return nil, nil, err
		}
	}
}

// create makes the node with the seed; one that exists already is fine.
func (v *Value) create(ctx context.Context) error {
	wctx, done := writegrace.Context(ctx)
	_, err := v.c.Create(wctx, v.path, v.seed, framework.CreatingParentContainers())
	if err = done(err); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return err
	}
	return nil
}

// follow keeps the cache current from w's events until w ends (Close, or
// the client's Close), and closes w. A deleted node keeps the last value
// until it is made again. A read that fails (the retry policy gave up in
// a long partition) is tried again after a pause, or at the next event.
func (v *Value) follow(ctx context.Context, w *framework.Watcher) {
	defer v.wg.Done()
	defer func() { _ = w.Close() }()
	newPause := func() retry.Pause { return retry.Pause{Base: 50 * time.Millisecond, Max: time.Second} }
	pause := newPause()
	retryIn := time.NewTimer(time.Hour) // armed only after a failed read
	retryIn.Stop()
	defer retryIn.Stop()
	stale := false // a change (or a reconnection) not read yet
	for {
		if stale {
			err := v.reload(ctx)
			switch {
			case err == nil:
				stale = false
				pause = newPause()
			case ctx.Err() != nil || errors.Is(err, framework.ErrClosed):
				return
			default:
				v.log.Info("reading the value failed; retrying", zap.Error(err))
				retryIn.Reset(pause.Next())
			}
		}
		select {
		case ev, ok := <-w.Events():
			if !ok {
				return
			}
			v.log.Debug("watch fired", zap.Stringer("event", ev.Type))
			switch ev.Type {
			case framework.WatchCreated, framework.WatchDataChanged, framework.WatchResync:
				// WatchResync: changes made while disconnected, or in the
				// session before this one, were not seen.
				stale = true
			}
		case <-retryIn.C:
		case <-ctx.Done():
			return
		}
	}
}

// reload reads the node and caches its value. A missing node is not made
// again (only Start, Get and Set make it): its last value stays.
func (v *Value) reload(ctx context.Context) error {
	data, stat, err := v.c.Get(ctx, v.path)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return nil
	case err != nil:
		return err
	}
	if err := v.layout(ctx, stat); errors.Is(err, ErrLayoutMismatch) {
		v.log.Warn("the node holds another recipe's layout", zap.Error(err))
		return nil
	} else if err != nil {
		return err
	}
	if v.accept != nil {
		if err := v.accept(data); err != nil {
			// Not ours to fix: keep the last value, wait for the next write.
			v.log.Warn("node holds malformed data", zap.Error(err))
			return nil
		}
	}
	v.update(stat, data)
	return nil
}

// layout refuses, for a plain Value, a node that an atomic handle writes
// (recipes/atomic keeps "writer-<uuid>" children under it): a Value's
// unconditional Set would overwrite a counter. A Count (accept set) shares
// its layout with an atomic Int and tells a Long by its size instead. It
// lists the children only when there are some; other children are left
// alone.
func (v *Value) layout(ctx context.Context, stat *zk.Stat) error {
	if v.accept != nil || stat == nil || stat.NumChildren == 0 {
		return nil
	}
	kids, _, err := v.c.Children(ctx, v.path)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return nil
	case err != nil:
		return err
	}
	for _, k := range kids {
		if id, ok := strings.CutPrefix(k, "writer-"); ok && uuid.Validate(id) == nil {
			return fmt.Errorf("%w: an atomic handle writes the node (its writer child %q), not a %s", ErrLayoutMismatch, k, v.kind)
		}
	}
	return nil
}

func (v *Value) wrap(op string, err error) error {
	return fmt.Errorf("%s %s: %s: %w", v.kind, v.path, op, err)
}

// clone returns a copy of b that shares no memory with it (nil for nil).
func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return bytes.Clone(b)
}
