package semaphore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gocurator/curator/connstate"
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
		return locking.Verdict{}, fmt.Errorf("%w: V1 semaphore found a %q or %q child (V2 layout)",
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
	done := make(chan struct{})
	defer close(done)

	// The loop looks again when its changed channel closes. It must when
	// the maximum changes, and also when the session is lost: the loop
	// can set its watch on the node ahead in a new session (the getData is
	// retried across the loss) and then wait there although our node died
	// with the old session. A Lost state makes it list again and find out.
	lost := newWake()
	stop := s.c.Listen(func(st connstate.State) {
		if st == connstate.Lost {
			lost.fire()
		}
	})
	defer stop()
	// The maximum and the channel that reports its change are taken
	// together (Count.Watch), so a change between the loop's reading of one
	// and of the other is never missed.
	var (
		mu         sync.Mutex
		maxChanged <-chan struct{}
	)
	maxLeases := func() int {
		max, ch := s.limit()
		mu.Lock()
		maxChanged = ch
		mu.Unlock()
		return max
	}
	changed := func() <-chan struct{} {
		mu.Lock()
		defer mu.Unlock()
		return either(lost.channel(), maxChanged, done)
	}
	l := locking.New(s.c, s.path, d, locking.WithLogger(s.log),
		locking.WithMaxLeases(maxLeases), locking.WithChanged(changed))
	h, err := l.Acquire(ctx, wait)
	if errors.Is(err, locking.ErrWouldBlock) {
		return nil, ErrNoLease
	}
	if err != nil {
		return nil, err
	}
	return newLease(s.path, h), nil
}
