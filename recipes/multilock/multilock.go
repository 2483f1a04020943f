package multilock

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"go.uber.org/zap"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/fanout"
	"github.com/gocurator/curator/recipes/mutex"
)

// MultiLock holds several locks at once, all or nothing (Curator's
// InterProcessMultiLock): any mix of mutexes, read and write locks,
// semaphore mutexes and semaphore leases. Its members are acquired in one
// global order (by path), so two multi-locks naming the same locks in
// different orders cannot deadlock, and under one deadline, ctx's.
//
// Like sync.Mutex, the handle is not an owner: while it is held, another
// Acquire on it waits until some goroutine calls Release. Methods are safe
// for concurrent use. A nil *MultiLock is safe too: see ErrNilHandle.
type MultiLock struct {
	c       *framework.Client
	members []Member // in acquisition order
	err     error    // bad input found by New, returned by every call
	log     *zap.Logger
	token   chan struct{} // full while the handle holds or is acquiring

	mu  sync.Mutex
	cur *hold // nil when nothing is held
}

// hold is one acquisition of every member.
type hold struct {
	holds []held        // holds[i] is members[i]'s
	done  chan struct{} // closed when the hold ends
	stop  chan struct{} // closed by Release: the watch goroutine returns
	err   error         // why it ended; nil while held (guarded by mu)
	wg    sync.WaitGroup
}

// New returns a multi-lock of members, whose handles belong to c. It does
// no I/O. A nil client, no member, a zero Member or two members that
// would wait for each other (two locks on one path other than Write and
// Read of one RWLock, or Lease members) is reported by every call
// (ErrNilClient, ErrInvalidMembers).
func New(c *framework.Client, members ...Member) *MultiLock {
	m := &MultiLock{c: c, token: make(chan struct{}, 1), log: c.Logger().Named("multilock")}
	m.members, m.err = arrange(members)
	if c == nil {
		m.err = ErrNilClient
	}
	return m
}

// NewMutexes returns a multi-lock of one mutex per path, with opts (Curator's
// InterProcessMultiLock(client, paths)).
func NewMutexes(c *framework.Client, paths []string, opts ...mutex.Option) *MultiLock {
	members := make([]Member, len(paths))
	for i, p := range paths {
		members[i] = Mutex(mutex.New(c, p, opts...))
	}
	return New(c, members...)
}

// arrange returns members in acquisition order, and why they cannot be
// held together (nil if they can).
func arrange(members []Member) ([]Member, error) {
	sorted := slices.Clone(members)
	slices.SortStableFunc(sorted, func(a, b Member) int {
		switch {
		case before(a, b):
			return -1
		case before(b, a):
			return 1
		}
		return 0
	})
	if len(sorted) == 0 {
		return nil, fmt.Errorf("%w: no member", ErrInvalidMembers)
	}
	for i, m := range sorted {
		if m.acquire == nil {
			return sorted, fmt.Errorf("%w: a zero Member", ErrInvalidMembers)
		}
		if i == 0 {
			continue
		}
		p := sorted[i-1]
		if comparePaths(p.path, m.path) != 0 {
			continue
		}
		downgrade := p.rank == rankWrite && m.rank == rankRead && p.owner == m.owner
		leases := p.kind == m.kind && m.kind == "lease of"
		if !downgrade && !leases {
			return sorted, fmt.Errorf("%w: %s and %s would wait for each other", ErrInvalidMembers, p, m)
		}
	}
	return sorted, nil
}

// Acquire blocks until every member is held or ctx ends (use a ctx deadline
// for a timeout: it bounds the whole acquire, not each member). Members are
// acquired one at a time in path order; while this handle holds, Acquire
// waits for a Release. On failure the members already held are released,
// in reverse order, before Acquire returns (their deletes go on in the
// background if the connection is down), no node is left, and the error is
// never nil: ctx's error, framework.ErrClosed, or the failing member's
// error, which names it.
func (m *MultiLock) Acquire(ctx context.Context) error {
	_, err := m.acquire(ctx, true)
	return err
}

// TryAcquire acquires every member only if each is free now: it never waits
// for another holder (it does wait for the network). It returns false, with
// nothing held and no node left, when a member is held elsewhere or this
// handle holds already.
func (m *MultiLock) TryAcquire(ctx context.Context) (bool, error) {
	return m.acquire(ctx, false)
}

func (m *MultiLock) acquire(ctx context.Context, wait bool) (bool, error) {
	if m == nil {
		return false, ErrNilHandle
	}
	if m.err != nil {
		return false, fmt.Errorf("multilock: acquire: %w", m.err)
	}
	if ctx == nil {
		return false, fmt.Errorf("multilock: acquire: %w: nil context", framework.ErrInvalidOption)
	}
	if wait {
		select {
		case m.token <- struct{}{}:
		case <-ctx.Done():
			return false, fmt.Errorf("multilock: acquire: %w", ctx.Err())
		}
	} else {
		select {
		case m.token <- struct{}{}:
		default:
			return false, nil
		}
	}
	holds := make([]held, 0, len(m.members))
	for _, mb := range m.members {
		h, err := mb.acquire(ctx, wait)
		if err == nil && h == nil {
			// Busy, for a try.
			m.rollback(ctx, holds)
			<-m.token
			return false, nil
		}
		if err != nil {
			m.rollback(ctx, holds)
			<-m.token
			return false, fmt.Errorf("multilock: acquire %s: %w", mb, err)
		}
		holds = append(holds, h)
	}
	h := &hold{holds: holds, done: make(chan struct{}), stop: make(chan struct{})}
	m.mu.Lock()
	m.cur = h
	m.mu.Unlock()
	h.wg.Add(1)
	go m.watch(h)
	return true, nil
}

// rollback releases the holds of a failed acquire, last first, while the
// clean-up is quick (framework.Client.CleanupContext); what it cannot
// delete now is deleted in the background by the members' guaranteed
// deletes.
func (m *MultiLock) rollback(ctx context.Context, holds []held) {
	if len(holds) == 0 {
		return
	}
	dctx, cancel := m.c.CleanupContext(ctx)
	defer cancel()
	for i := len(holds) - 1; i >= 0; i-- {
		if err := holds[i].Release(dctx); err != nil {
			m.log.Info("releasing a member continues in the background", zap.Stringer("member", m.members[i]), zap.Error(err))
		}
	}
}

// watch ends h when a member's hold ends, or returns at Release.
func (m *MultiLock) watch(h *hold) {
	defer h.wg.Done()
	cases := make([]reflect.SelectCase, 0, len(h.holds)+1)
	cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(h.stop)})
	for _, x := range h.holds {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(x.Done())})
	}
	if i, _, _ := reflect.Select(cases); i > 0 {
		m.end(h, i-1)
	}
}

// end ends h because member i's hold ended; the first reason stays.
func (m *MultiLock) end(h *hold, i int) {
	err := h.holds[i].Err()
	if err == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if h.err != nil {
		return
	}
	h.err = fmt.Errorf("multilock: %s: %w", m.members[i], err)
	close(h.done)
	m.log.Info("multi-lock lost", zap.Stringer("member", m.members[i]), zap.Error(err))
}

// current returns the hold, having judged its members by the clock as
// their Err does, or nil.
func (m *MultiLock) current() *hold {
	m.mu.Lock()
	h := m.cur
	ended := h == nil || h.err != nil
	m.mu.Unlock()
	if ended {
		return h
	}
	for i, x := range h.holds {
		if x.Err() != nil {
			m.end(h, i)
			break
		}
	}
	return h
}

// Release releases every member, last acquired first, from any goroutine.
// Each member's delete is guaranteed: if one fails (connection down, ctx
// ended) Release returns the error and the delete goes on in the
// background. After a loss Release still releases the other members and
// returns an error wrapping ErrLockLost (or framework.ErrClosed); the
// handle is free for the next Acquire either way. ErrNotHeld when nothing
// is held. A nil ctx is refused (framework.ErrInvalidOption) before
// anything changes: the hold goes on.
func (m *MultiLock) Release(ctx context.Context) error {
	if m == nil {
		return ErrNotHeld
	}
	if ctx == nil {
		return fmt.Errorf("multilock: release: %w: nil context", framework.ErrInvalidOption)
	}
	m.mu.Lock()
	h := m.cur
	m.cur = nil
	if h != nil && h.err == nil {
		h.err = ErrNotHeld
		close(h.done)
	}
	m.mu.Unlock()
	if h == nil {
		return ErrNotHeld
	}
	close(h.stop)
	h.wg.Wait()
	var errs []error
	for i := len(h.holds) - 1; i >= 0; i-- {
		if err := h.holds[i].Release(ctx); err != nil {
			errs = append(errs, fmt.Errorf("multilock: release %s: %w", m.members[i], err))
		}
	}
	<-m.token
	return errors.Join(errs...)
}

// Done returns a channel closed when the current hold ends: released, or
// a member's hold lost (per the client's ErrorPolicy); a closed channel
// when nothing is held. Like the members' it judges the session by the
// clock, so the first look after a process pause finds it closed.
func (m *MultiLock) Done() <-chan struct{} {
	if m == nil {
		return fanout.Closed()
	}
	h := m.current()
	if h == nil {
		return fanout.Closed()
	}
	return h.done
}

// Err returns nil while every member is held, an error wrapping the first
// lost member's (ErrLockLost, framework.ErrClosed) and naming it once a
// member's hold ended, and ErrNotHeld when nothing is held.
func (m *MultiLock) Err() error {
	if m == nil {
		return ErrNotHeld
	}
	h := m.current()
	if h == nil {
		return ErrNotHeld
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return h.err
}

// IsHeld reports whether every member is held now.
func (m *MultiLock) IsHeld() bool { return m.Err() == nil }

// CheckOps returns one check operation per member, each failing unless the
// member's node still exists: put them in front of a write in one
// transaction (framework.Client.Multi) so that the server applies the
// write only while every member is held. The error is Err's when the hold
// has ended.
func (m *MultiLock) CheckOps() ([]framework.Op, error) {
	if err := m.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	h := m.cur
	m.mu.Unlock()
	if h == nil {
		return nil, ErrNotHeld
	}
	ops := make([]framework.Op, 0, len(h.holds))
	for i, x := range h.holds {
		op, err := x.CheckOp()
		if err != nil {
			return nil, fmt.Errorf("multilock: %s: %w", m.members[i], err)
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// Members returns the members in the order they are acquired.
func (m *MultiLock) Members() []Member {
	if m == nil {
		return nil
	}
	return slices.Clone(m.members)
}
