package semaphore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gocurator/curator/recipes/locking"
)

// lockName is the base name of V1 lease nodes and of the V2 gate's nodes.
const lockName = "lock-"

// v1Driver is the lock loop's standard driver (held iff fewer than max
// nodes sort before ours; watch the node max places ahead) that also
// refuses a path holding the V2 layout. One per Acquire: it remembers what
// the listings of that Acquire showed.
type v1Driver struct {
	locking.StandardDriver
	clash atomic.Bool // a V2 "locks" or "leases" child was listed
}

// Sequence is the standard driver's, noting V2 directories on the way: the
// loop shows every child of the path to Sequence before it decides.
func (d *v1Driver) Sequence(child string) (int32, bool) {
	if child == locksDir || child == leasesDir {
		d.clash.Store(true)
	}
	return d.StandardDriver.Sequence(child)
}

// GetsTheLock fails on a V2 layout and admits nobody while the maximum is
// below 1; otherwise it is the standard driver's.
func (d *v1Driver) GetsTheLock(sorted []string, own string, maxLeases int) (locking.Verdict, error) {
	if d.clash.Load() {
		return locking.Verdict{}, fmt.Errorf("%w: V1 semaphore found the %q and %q children of a V2 semaphore",
			ErrLayoutMismatch, locksDir, leasesDir)
	}
	if maxLeases < 1 {
		// Nothing ahead can let us in: watch our own node (it changes only
		// if it goes) and wait for the maximum to change.
		return locking.Verdict{Watch: own}, nil
	}
	return d.StandardDriver.GetsTheLock(sorted, own, maxLeases)
}

// acquireV1 runs the lock loop with the maximum: FIFO, one node per lease,
// a release wakes only the waiter it lets in.
func (s *Semaphore) acquireV1(ctx context.Context, wait bool) (*Lease, error) {
	d := &v1Driver{StandardDriver: locking.StandardDriver{LockName: lockName, Data: s.opts.data}}
	opts := []locking.Option{locking.WithLogger(s.log)}
	if s.opts.count == nil {
		max := s.max
		opts = append(opts, locking.WithMaxLeases(func() int { return max }))
	} else {
		// The maximum and the channel that reports its change are taken
		// together (Count.Watch), so a change between the loop's reading
		// of one and of the other is never missed.
		var (
			mu      sync.Mutex
			changed <-chan struct{}
		)
		opts = append(opts,
			locking.WithMaxLeases(func() int {
				max, ch := s.limit()
				mu.Lock()
				changed = ch
				mu.Unlock()
				return max
			}),
			locking.WithChanged(func() <-chan struct{} {
				mu.Lock()
				defer mu.Unlock()
				return changed
			}))
	}
	h, err := locking.New(s.c, s.path, d, opts...).Acquire(ctx, wait)
	if errors.Is(err, locking.ErrWouldBlock) {
		return nil, ErrNoLease
	}
	if err != nil {
		return nil, err
	}
	return newLease(s.path, h), nil
}
