package locking

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/framework"
)

// Internals runs the lock loop for one recipe handle on one lock path.
// It is safe for concurrent use; every Acquire makes its own node.
type Internals struct {
	c         *framework.Client
	path      string
	driver    Driver
	maxLeases func() int
	changed   func() <-chan struct{}
	log       *zap.Logger
	err       error // set by New for bad input; returned by every call
}

// Option configures Internals.
type Option func(*Internals)

// WithMaxLeases sets how many holders the lock allows, read at every
// decision (default 1). Pair it with WithChanged when it can change.
func WithMaxLeases(f func() int) Option { return func(l *Internals) { l.maxLeases = f } }

// WithChanged sets a function returning a channel that closes when the
// driver's inputs (such as max leases) change: waiters then look again. The
// loop calls the max leases function and then this one, before each look;
// the channel must close on any change after the value that call returned
// (take both at one instant, as shared.Count's Watch allows, and hand the
// channel over here), or a change between the two calls is missed.
func WithChanged(f func() <-chan struct{}) Option { return func(l *Internals) { l.changed = f } }

// WithLogger sets the logger (default: the client's, named "lock").
func WithLogger(log *zap.Logger) Option { return func(l *Internals) { l.log = log } }

// New returns the loop for driver d on path. It does no I/O; a nil client,
// nil driver or invalid path is reported by every later call.
func New(c *framework.Client, path string, d Driver, opts ...Option) *Internals {
	l := &Internals{c: c, path: path, driver: d, maxLeases: func() int { return 1 }}
	switch {
	case c == nil:
		l.err = ErrNilClient
	case d == nil:
		l.err = errors.New("curator: nil driver")
	default:
		if err := framework.ValidatePath(path); err != nil {
			l.err = err
		} else if path == "/" {
			l.err = fmt.Errorf("%w: a lock cannot live at the root", ErrInvalidPath)
		}
	}
	for _, o := range opts {
		if o != nil {
			o(l)
		}
	}
	if l.log == nil {
		if c != nil {
			l.log = c.Logger().Named("lock")
		} else {
			l.log = zap.NewNop()
		}
	}
	return l
}

// Path returns the lock path ("" for a nil Internals).
func (l *Internals) Path() string {
	if l == nil {
		return ""
	}
	return l.path
}

// Client returns the client (nil for a nil Internals).
func (l *Internals) Client() *framework.Client {
	if l == nil {
		return nil
	}
	return l.c
}

// Err returns the error New found in its input, or nil; ErrNilHandle for
// a nil Internals.
func (l *Internals) Err() error {
	if l == nil {
		return ErrNilHandle
	}
	return l.err
}

// Acquire creates a node and, with wait, blocks until it holds the lock, ctx
// ends, or the client closes. Without wait it returns ErrWouldBlock at once
// when others hold the lock. On any failure the node is deleted before
// Acquire returns (a guaranteed delete continues in the background if the
// connection is down) and the error is non-nil: ctx's error (errors.Is
// context.Canceled / DeadlineExceeded), framework.ErrClosed, ErrWouldBlock,
// or the ZooKeeper error that the retry policy gave up on.
func (l *Internals) Acquire(ctx context.Context, wait bool) (*Hold, error) {
	if l == nil {
		return nil, ErrNilHandle
	}
	if l.err != nil {
		return nil, l.err
	}
	if ctx == nil {
		return nil, fmt.Errorf("%w: nil context", framework.ErrInvalidOption)
	}
	start := time.Now()
	for recreates := 0; ; recreates++ {
		spec := l.driver.Node()
		// The Stat of our node (its czxid is the fencing token, its owner
		// the session it lives in) comes with the create, at no extra
		// request: ZooKeeper answers a session's requests in order, so a
		// separate exists would delay the listing behind it.
		var stat zk.Stat
		node, err := l.c.Create(ctx, framework.JoinPath(l.path, spec.Name), spec.Data,
			framework.WithMode(spec.Mode), framework.Protected(), framework.CreatingParentContainers(),
			framework.StoringStatIn(&stat))
		if err != nil {
			if node != "" {
				l.deleteNode(ctx, node)
			}
			return nil, fmt.Errorf("lock %s: %w", l.path, err)
		}
		h, err := l.wait(ctx, node, &stat, wait)
		if err == nil {
			return h, nil
		}
		l.deleteNode(ctx, node)
		if !errors.Is(err, errRecreate) {
			return nil, fmt.Errorf("lock %s: %w", l.path, err)
		}
		// Our node is gone or belongs to a dead session: make a new one,
		// under the client's retry policy.
		sleep, ok := l.c.RetryPolicy().AllowRetry(recreates, time.Since(start))
		if !ok {
			return nil, fmt.Errorf("lock %s: %w: node lost %d times while waiting", l.path, ErrLockLost, recreates+1)
		}
		l.log.Info("own node lost while waiting; creating it again", zap.String("node", node))
		if err := Sleep(ctx, l.c, sleep); err != nil {
			return nil, fmt.Errorf("lock %s: %w", l.path, err)
		}
	}
}

// errRecreate means our node is missing or belongs to a dead session.
var errRecreate = errors.New("own node lost")

// wait is the loop proper, for one node of ours, created with Stat stat.
func (l *Internals) wait(ctx context.Context, node string, stat *zk.Stat, wait bool) (*Hold, error) {
	_, own := framework.SplitPath(node)
	for {
		// maxLeases then changed: see WithChanged for the contract that
		// keeps a change between the two calls from being missed.
		max := l.maxLeases()
		var changed <-chan struct{}
		if l.changed != nil {
			changed = l.changed()
		}
		sorted, st, err := l.list(ctx, node, stat == nil)
		if errors.Is(err, zk.ErrNoNode) {
			// The lock path is gone, so our node is too (its container
			// parent was reaped after our session ended).
			return nil, errRecreate
		}
		if err != nil {
			return nil, err
		}
		if st != nil {
			stat = st
		}
		if stat == nil || stat.EphemeralOwner != l.c.SessionID() || indexOf(sorted, own) < 0 {
			return nil, errRecreate
		}
		v, err := l.driver.GetsTheLock(sorted, own, max)
		if err != nil {
			return nil, err
		}
		if v.Held {
			return l.hold(node, stat), nil
		}
		if !wait {
			return nil, ErrWouldBlock
		}
		_, _, ch, err := l.c.GetW(ctx, framework.JoinPath(l.path, v.Watch))
		if errors.Is(err, zk.ErrNoNode) {
			continue // gone between the listing and the watch: look again
		}
		if err != nil {
			return nil, err
		}
		if l.c.SessionID() != stat.EphemeralOwner {
			// The session ended while GetW was retrying: the watch may be
			// in the new session, but our node died with the old one.
			// Never wait on a node of a dead session.
			return nil, errRecreate
		}
		select {
		case ev := <-ch:
			l.log.Debug("watch fired", zap.String("node", node), zap.Stringer("event", ev.Type))
			if ev.Type == zk.EventNodeDeleted && v.HeldWhenGone && l.maxLeases() == max {
				st, err := l.c.Exists(ctx, node)
				if err != nil {
					return nil, err
				}
				if st == nil || st.EphemeralOwner != l.c.SessionID() {
					return nil, errRecreate
				}
				return l.hold(node, st), nil
			}
			if ev.Type == zk.EventNotWatching {
				stat = nil // the session may be gone: check our node again
			}
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-l.c.Done():
			return nil, framework.ErrClosed
		}
	}
}

// list returns the sorted participants and, with withStat, our node's Stat,
// read concurrently so the two cost one round trip. A nil Stat with no error
// means our node is gone.
func (l *Internals) list(ctx context.Context, node string, withStat bool) ([]string, *zk.Stat, error) {
	var (
		stat    *zk.Stat
		statErr error
		done    chan struct{}
	)
	if withStat {
		done = make(chan struct{})
		go func() {
			defer close(done)
			stat, statErr = l.c.Exists(ctx, node)
		}()
	}
	children, _, err := l.c.Children(ctx, l.path)
	if done != nil {
		<-done
	}
	if err != nil {
		return nil, nil, err
	}
	if statErr != nil {
		return nil, nil, statErr
	}
	return SortChildren(children, l.driver.Sequence), stat, nil
}

// Participants returns the participants' node paths in sequence order; for
// the mutex the holder comes first.
func (l *Internals) Participants(ctx context.Context) ([]string, error) {
	if l == nil {
		return nil, ErrNilHandle
	}
	if l.err != nil {
		return nil, l.err
	}
	children, _, err := l.c.Children(ctx, l.path)
	if errors.Is(err, zk.ErrNoNode) {
		return []string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lock %s: participants: %w", l.path, err)
	}
	sorted := SortChildren(children, l.driver.Sequence)
	for i, s := range sorted {
		sorted[i] = framework.JoinPath(l.path, s)
	}
	return sorted, nil
}

// deleteNode deletes a node of ours after a failed acquire, within the
// bounds of the client's CleanupContext; the delete is guaranteed, so past them it goes on in
// the background until it succeeds or the client closes.
func (l *Internals) deleteNode(ctx context.Context, node string) {
	dctx, cancel := l.c.CleanupContext(ctx)
	defer cancel()
	if err := l.c.Delete(dctx, node, framework.Guaranteed(), framework.Quietly()); err != nil {
		l.log.Info("deleting own node continues in the background", zap.String("node", node), zap.Error(err))
	}
}

// Sleep waits d, or until ctx ends (its error) or the client closes
// (framework.ErrClosed): the pause between a recipe's attempts.
func Sleep(ctx context.Context, c *framework.Client, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.Done():
		return framework.ErrClosed
	}
}
