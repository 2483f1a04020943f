package shared

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/fanout"
	"github.com/gocurator/curator/retry"
)

// Count is a shared integer on ZooKeeper (Curator's SharedCount): a
// PERSISTENT node whose data is a 4-byte big-endian signed int. Every Count
// on the same path, in Go or in Java, sees the same value.
//
// Get, GetVersioned, Set and TrySet talk to ZooKeeper on every call. Start
// additionally keeps a cached copy current with a watch, which Value, Watch
// and Listen read; Close stops it. A Count is safe for concurrent use.
type Count struct {
	c    *framework.Client
	path string
	seed int
	err  error // bad input found by NewCount, returned by every call
	log  *zap.Logger
	subs fanout.Fanout[int]

	starting chan struct{} // 1-buffered: held by the Start doing I/O

	mu      sync.Mutex
	started bool
	closed  bool
	cur     VersionedValue
	czxid   int64         // of the node cur was read from; 0 for the seed
	changed fanout.Signal // notified when cur changes
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// NewCount returns a count at path whose node is created with seed when it
// does not exist. It does no I/O: a nil client, an invalid path (or the
// root) or a seed outside the int32 range is reported by every later call
// (ErrNilClient, ErrInvalidPath, ErrOutOfRange).
func NewCount(c *framework.Client, path string, seed int) *Count {
	n := &Count{c: c, path: path, seed: seed, log: zap.NewNop(), starting: make(chan struct{}, 1)}
	n.cur = VersionedValue{Version: -1, Value: seed}
	switch {
	case c == nil:
		n.err = ErrNilClient
	case seed < math.MinInt32 || seed > math.MaxInt32:
		n.err = fmt.Errorf("%w: seed %d", ErrOutOfRange, seed)
	default:
		if err := framework.ValidatePath(path); err != nil {
			n.err = err
		} else if path == "/" {
			n.err = fmt.Errorf("%w: a count cannot live at the root", ErrInvalidPath)
		}
		n.log = c.Logger().Named("sharedcount").With(zap.String("path", path))
	}
	return n
}

// Path returns the count's node path.
func (n *Count) Path() string {
	if n == nil {
		return ""
	}
	return n.path
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
	if n.err != nil {
		return n.wrap("start", n.err)
	}
	if ctx == nil {
		return n.wrap("start", fmt.Errorf("%w: nil context", framework.ErrInvalidOption))
	}
	if done, err := n.startedOrClosed(); done {
		return err
	}
	// Concurrent Starts wait for the one doing I/O, or for their ctx.
	select {
	case n.starting <- struct{}{}:
	case <-ctx.Done():
		return n.wrap("start", ctx.Err())
	}
	defer func() { <-n.starting }()
	if done, err := n.startedOrClosed(); done {
		return err
	}
	// The watch lives until Close: its context is not Start's, which only
	// bounds the setting up. Set before the read, it sees every change
	// after it.
	wctx, cancel := context.WithCancel(context.Background())
	stop := context.AfterFunc(ctx, cancel)
	w, err := n.c.Watch(wctx, n.path)
	if err != nil {
		stop()
		cancel()
		return n.wrap("start", err)
	}
	value, stat, err := n.read(ctx)
	if err == nil && !stop() {
		err = ctx.Err()
	}
	if err != nil {
		stop()
		cancel()
		_ = w.Close()
		return n.wrap("start", err)
	}
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		cancel()
		_ = w.Close()
		return n.wrap("start", ErrClosed)
	}
	n.started = true
	n.cancel = cancel
	n.wg.Add(1)
	n.updateLocked(stat, value)
	n.mu.Unlock()
	go n.follow(wctx, w)
	return nil
}

// startedOrClosed reports whether Start has nothing to do, and what it
// returns then.
func (n *Count) startedOrClosed() (bool, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case n.closed:
		return true, n.wrap("start", ErrClosed)
	case n.started:
		return true, nil
	}
	return false, nil
}

// Close stops the watch started by Start and every listener, and waits for
// their goroutines (listeners get what was queued first). It must not be
// called from a listener. The node stays. Close is idempotent; Get, Set and
// TrySet keep working after it.
func (n *Count) Close() error {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	n.closed = true
	cancel := n.cancel
	n.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	n.wg.Wait()
	n.subs.Close()
	return nil
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
	if n.err != nil {
		return VersionedValue{}, n.wrap("get", n.err)
	}
	value, stat, err := n.read(ctx)
	if err != nil {
		return VersionedValue{}, n.wrap("get", err)
	}
	n.update(stat, value)
	return VersionedValue{Version: stat.Version, Value: value}, nil
}

// Set writes v whatever the current value (Curator's setCount), creating
// the node if it is missing. v must fit an int32 (ErrOutOfRange).
func (n *Count) Set(ctx context.Context, v int) error {
	if n == nil {
		return ErrNilHandle
	}
	if n.err != nil {
		return n.wrap("set", n.err)
	}
	data, err := encode(v)
	if err != nil {
		return n.wrap("set", err)
	}
	for {
		stat, err := n.c.Set(ctx, n.path, data, -1)
		if err == nil {
			n.update(stat, v)
			return nil
		}
		if !errors.Is(err, zk.ErrNoNode) {
			return n.wrap("set", err)
		}
		_, err = n.c.Create(ctx, n.path, data, framework.CreatingParentContainers())
		if err == nil {
			// Create returns no Stat: read the node back for the cache.
			if value, stat, err := n.read(ctx); err == nil {
				n.update(stat, value)
			}
			return nil
		}
		if !errors.Is(err, zk.ErrNodeExists) {
			return n.wrap("set", err)
		}
		// Made by someone else meanwhile: overwrite it.
	}
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
	if n.err != nil {
		return false, n.wrap("trySet", n.err)
	}
	data, err := encode(v)
	if err != nil {
		return false, n.wrap("trySet", err)
	}
	if prev.Version < 0 {
		// -1 would mean "any version" to ZooKeeper.
		return false, nil
	}
	stat, err := n.c.Set(ctx, n.path, data, prev.Version)
	switch {
	case err == nil:
		n.update(stat, v)
		return true, nil
	case errors.Is(err, zk.ErrBadVersion), errors.Is(err, zk.ErrNoNode):
		return false, nil
	default:
		return false, n.wrap("trySet", err)
	}
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
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cur
}

// Watch returns the cached count and a channel that is closed when the
// cached count next changes, both taken at one instant, so a change between
// reading the value and waiting on the channel is never missed.
func (n *Count) Watch() (VersionedValue, <-chan struct{}) {
	if n == nil {
		return VersionedValue{}, fanout.Closed()
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cur, n.changed.C()
}

// Listen calls fn with every new value the count sees from now on (every
// new version, as Curator's SharedCountListener), in version order, on a
// goroutine of fn's own. Each change is read after its event, so values
// written in quick succession may be seen only as the last of them.
// cancel stops further calls and does not block; Close stops all
// listeners.
func (n *Count) Listen(fn func(v int)) (cancel func()) {
	if n == nil {
		return func() {}
	}
	return n.subs.Add(fn)
}

// update caches value read with stat if it is newer than the cached one.
func (n *Count) update(stat *zk.Stat, value int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.updateLocked(stat, value)
}

// updateLocked orders reads by node incarnation (czxid), then by data
// version: a node deleted and made again restarts at version 0.
func (n *Count) updateLocked(stat *zk.Stat, value int) {
	if stat == nil {
		return
	}
	newer := stat.Czxid > n.czxid || (stat.Czxid == n.czxid && stat.Version > n.cur.Version)
	if !newer {
		return
	}
	n.czxid = stat.Czxid
	n.cur = VersionedValue{Version: stat.Version, Value: value}
	n.changed.Notify()
	n.subs.Publish(value)
	n.log.Debug("count changed", zap.Int("value", value), zap.Int32("version", stat.Version))
}

// read reads the node, creating it with the seed when missing.
func (n *Count) read(ctx context.Context) (int, *zk.Stat, error) {
	for {
		data, stat, err := n.c.Get(ctx, n.path)
		if err == nil {
			v, err := decode(data)
			if err != nil {
				return 0, nil, err
			}
			return v, stat, nil
		}
		if !errors.Is(err, zk.ErrNoNode) {
			return 0, nil, err
		}
		if err := n.create(ctx); err != nil {
			return 0, nil, err
		}
	}
}

// create makes the node with the seed; one that exists already is fine.
func (n *Count) create(ctx context.Context) error {
	data, err := encode(n.seed)
	if err != nil {
		return err
	}
	_, err = n.c.Create(ctx, n.path, data, framework.CreatingParentContainers())
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return err
	}
	return nil
}

// follow keeps the cache current from w's events until w ends (Close, or
// the client's Close), and closes w. A deleted node keeps the last value
// until it is made again. A read that fails (the retry policy gave up in
// a long partition) is tried again after a pause, or at the next event.
func (n *Count) follow(ctx context.Context, w *framework.Watcher) {
	defer n.wg.Done()
	defer func() { _ = w.Close() }()
	newPause := func() retry.Pause { return retry.Pause{Base: 50 * time.Millisecond, Max: time.Second} }
	pause := newPause()
	retryIn := time.NewTimer(time.Hour) // armed only after a failed read
	retryIn.Stop()
	defer retryIn.Stop()
	stale := false // a change (or a reconnection) not read yet
	for {
		if stale {
			err := n.reload(ctx)
			switch {
			case err == nil:
				stale = false
				pause = newPause()
			case ctx.Err() != nil || errors.Is(err, framework.ErrClosed):
				return
			default:
				n.log.Info("reading the count failed; retrying", zap.Error(err))
				retryIn.Reset(pause.Next())
			}
		}
		select {
		case ev, ok := <-w.Events():
			if !ok {
				return
			}
			n.log.Debug("watch fired", zap.Stringer("event", ev.Type))
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
func (n *Count) reload(ctx context.Context) error {
	data, stat, err := n.c.Get(ctx, n.path)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return nil
	case err != nil:
		return err
	}
	v, err := decode(data)
	if err != nil {
		// Not ours to fix: keep the last value, wait for the next write.
		n.log.Warn("count node holds malformed data", zap.Error(err))
		return nil
	}
	n.update(stat, v)
	return nil
}

func (n *Count) wrap(op string, err error) error {
	return fmt.Errorf("sharedcount %s: %s: %w", n.path, op, err)
}
