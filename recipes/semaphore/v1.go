package semaphore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-zookeeper/zk"
	"golang.org/x/sync/errgroup"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locking"
)

// lockName is the base name of V1 lease nodes and of the V2 gate's nodes.
const lockName = "lock-"

// v1Driver is the lock loop's standard driver (held iff fewer than the
// limit's nodes sort before ours; watch the node that many places ahead)
// whose attempts also refuse a path where a V2 semaphore is at work. One
// per Semaphore: it keeps no state of any acquire.
type v1Driver struct {
	locking.StandardDriver
	// v2Node returns a node of the V2 layout ("locks/<gate node>" or
	// "leases/<lease node>"), "" when both directories are empty or
	// missing.
	v2Node  func(ctx context.Context) (string, error)
	attempt locking.Attempt // every attempt's: its Check is noV2
}

func newV1Driver(s *Semaphore) *v1Driver {
	d := &v1Driver{StandardDriver: locking.StandardDriver{LockName: lockName, Data: s.opts.data}, v2Node: s.v2Node}
	d.attempt = locking.Attempt{Check: d.noV2}
	return d
}

// Begin begins an attempt whose Check is noV2.
func (d *v1Driver) Begin(context.Context, bool) (locking.Attempt, error) { return d.attempt, nil }

// noV2 fails while a V2 semaphore has a gate or lease node on the path,
// reading the V2 directories only when the listing that came with our
// create shows one of them.
//
// Empty V2 directories are not a V2 semaphore at work: Curator's V2 leaves
// them after every acquire, and the server reaps them only later. Our node
// exists when noV2 runs, and a V2 acquirer makes its gate and lease nodes
// before it looks for V1 nodes: if a V2 node is missing here, the V2
// acquirer lists the path after our node was made and refuses it. So one
// look per attempt is enough, and the two can never both be admitted.
func (d *v1Driver) noV2(ctx context.Context, listing []string) error {
	if listing != nil && !slices.ContainsFunc(listing, func(c string) bool { return c == locksDir || c == leasesDir }) {
		return nil
	}
	node, err := d.v2Node(ctx)
	if err != nil {
		return fmt.Errorf("looking for a V2 layout: %w", err)
	}
	if node != "" {
		return fmt.Errorf("%w: V1 semaphore found V2 node %q", ErrLayoutMismatch, node)
	}
	return nil
}

// GetsTheLock admits nobody while the limit is below 1; otherwise it is
// the standard driver's.
func (d *v1Driver) GetsTheLock(l locking.Listing) (locking.Verdict, error) {
	if l.Limit < 1 {
		// Nothing ahead can let us in: watch our own node (it changes only
		// if it goes) and wait for the limit to change.
		return locking.Verdict{Watch: l.Own}, nil
	}
	return d.StandardDriver.GetsTheLock(l)
}

// acquireV1 runs the semaphore's V1 loop: FIFO, one node per lease, a
// release wakes only the waiter it lets in, and a change of the maximum
// (WithLimit) makes the waiters look again.
func (s *Semaphore) acquireV1(ctx context.Context, wait bool) (*Lease, error) {
	h, err := take(ctx, s.loop, wait)
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
// empty or missing; both are listed at once (the first error cancels the
// other listing).
func (s *Semaphore) v2Node(ctx context.Context) (string, error) {
	dirs := []string{leasesDir, locksDir}
	found := make([]string, len(dirs))
	g, ctx := errgroup.WithContext(ctx)
	for i, dir := range dirs {
		g.Go(func() error {
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
		})
	}
	if err := g.Wait(); err != nil {
		return "", err
	}
	for _, n := range found {
		if n != "" {
			return n, nil
		}
	}
	return "", nil
}
