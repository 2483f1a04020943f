package semaphore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locking"
)

// lockName is the base name of V1 lease nodes and of the V2 gate's nodes.
const lockName = "lock-"

// v1Driver is the lock loop's standard driver (held iff fewer than max
// nodes sort before ours; watch the node max places ahead) that also
// refuses a path where a V2 semaphore is at work. One per Acquire.
type v1Driver struct {
	locking.StandardDriver
	// v2Node returns a node of the V2 layout ("locks/<gate node>" or
	// "leases/<lease node>"), "" when both directories are empty or
	// missing. It is asked only when a listing shows either directory.
	v2Node func() (string, error)
	dirs   atomic.Bool // the listing being decided showed "locks" or "leases"
}

// Sequence is the standard driver's, noting V2 directories on the way: the
// loop shows every child of the path to Sequence before it decides.
func (d *v1Driver) Sequence(child string) (int32, bool) {
	if child == locksDir || child == leasesDir {
		d.dirs.Store(true)
	}
	return d.StandardDriver.Sequence(child)
}

// GetsTheLock fails while a V2 semaphore has a gate or lease node on the
// path, and admits nobody while the maximum is below 1; otherwise it is
// the standard driver's.
//
// Empty V2 directories are not a V2 semaphore at work: Curator's V2 leaves
// them after every acquire, and the server reaps them only later. A V2
// acquirer makes its gate and lease nodes before it looks for V1 nodes, and
// we made our node before this listing, so if a V2 lease node is missing
// from the directory listed here, the V2 acquirer lists the path after our
// node was made and refuses it: the two cannot both be admitted.
func (d *v1Driver) GetsTheLock(sorted []string, own string, maxLeases int) (locking.Verdict, error) {
	if d.dirs.Swap(false) {
		node, err := d.v2Node()
		if err != nil {
			return locking.Verdict{}, fmt.Errorf("looking for a V2 layout: %w", err)
		}
		if node != "" {
			return locking.Verdict{}, fmt.Errorf("%w: V1 semaphore found V2 node %q", ErrLayoutMismatch, node)
		}
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
	d := &v1Driver{
		StandardDriver: locking.StandardDriver{LockName: lockName, Data: s.opts.data},
		v2Node:         func() (string, error) { return s.v2Node(ctx) },
	}

	// The loop looks again when its changed channel closes: when the
	// maximum changes (the loop itself watches for the loss of our node's
	// session). The loop asks for a channel at every look; they cost no
	// goroutine but the one relay of count changes.
	w := newWake()
	if s.opts.count != nil {
		done := make(chan struct{})
		finished := relay(w, func() <-chan struct{} { _, ch := s.limit(); return ch }, done)
		defer func() {
			close(done)
			<-finished
		}()
	}
	// The loop reads the maximum, then asks for the channel. The wake's
	// channel is taken before the maximum is read: a change after the read
	// fires the wake after it, so the change is never missed.
	var (
		mu     sync.Mutex
		wakeCh <-chan struct{}
	)
	maxLeases := func() int {
		ch := w.channel()
		max, _ := s.limit()
		mu.Lock()
		wakeCh = ch
		mu.Unlock()
		return max
	}
	changed := func() <-chan struct{} {
		mu.Lock()
		defer mu.Unlock()
		return wakeCh
	}
	l := locking.New(s.c, s.path, d, locking.WithLogger(s.log),
		locking.WithMaxLeases(maxLeases), locking.WithChanged(changed), locking.WithName(s.opts.telemetryName),
		locking.WithInstruments(&s.tel))
	h, err := take(ctx, l, wait)
	if err != nil {
		return nil, err
	}
	return newLease(s.path, h), nil
}

// errBusy is a try's "no lease free now", which TryAcquire reports as false.
var errBusy = errors.New("no lease free")

// take runs l's Acquire, or without wait its TryAcquire, whose busy answer
// becomes errBusy.
func take(ctx context.Context, l *locking.Loop, wait bool) (*locking.Hold, error) {
	if wait {
		return l.Acquire(ctx)
	}
	h, ok, err := l.TryAcquire(ctx)
	if err == nil && !ok {
		return nil, errBusy
	}
	return h, err
}

// v2Node returns a node in the path's V2 directories, "" when they are
// empty or missing; both are listed at once.
func (s *Semaphore) v2Node(ctx context.Context) (string, error) {
	dirs := []string{leasesDir, locksDir}
	found := make([]string, len(dirs))
	fns := make([]func() error, len(dirs))
	for i, dir := range dirs {
		fns[i] = func() error {
			children, _, err := s.c.Children(ctx, framework.JoinPath(s.path, dir))
			if errors.Is(err, zk.ErrNoNode) {
				return nil
			}
			if err != nil {
				return err
			}
			if len(children) > 0 {
				found[i] = dir + "/" + children[0]
			}
			return nil
		}
	}
	if err := parallel(fns...); err != nil {
		return "", err
	}
	for _, n := range found {
		if n != "" {
			return n, nil
		}
	}
	return "", nil
}

// parallel runs fns concurrently, waits for all, and returns the first
// error in fns' order.
func parallel(fns ...func() error) error {
	if len(fns) == 1 {
		return fns[0]()
	}
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, f := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
