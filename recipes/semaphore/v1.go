package semaphore

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locking"
)

// lockName is the base name of V1 lease nodes and of the V2 gate's nodes.
const lockName = "lock-"

// traceName is the base name of a V1 participant's trace in leases/: a
// name with no recipe's mark in it ("lock-", "lease-", ...), so that no
// lock loop and no inspection takes it for a participant of its own, while
// V2 semaphores (Curator's among them) count it as they count every child
// of leases/.
const traceName = "v1-participant-"

// isTrace reports whether a child of leases/ is a V1 participant's trace.
func isTrace(child string) bool {
	_, ok := locking.Sequence(child, traceName)
	return ok
}

// v2Lease returns a child of leases/ that is not a V1 trace: a V2 lease
// (Curator's or ours), or anything else a V2 semaphore would count.
func v2Lease(leases []string) (string, bool) {
	for _, c := range leases {
		if !isTrace(c) {
			return c, true
		}
	}
	return "", false
}

// v1Driver is the lock loop's standard driver (held iff fewer than the
// limit's nodes sort before ours; watch the node that many places ahead)
// whose attempts first leave a trace in leases/ (Begin). It keeps no state
// of any acquire.
//
// Why the trace: Curator's InterProcessSemaphoreV2 knows nothing of V1; it
// counts the children of leases/ and nothing else, so a V1 check that runs
// once, when our node is made, cannot stop a Java V2 acquirer that comes
// later from admitting up to max beside our holders. With a trace per V1
// participant (waiting or holding) in leases/, every V2 acquirer counts our
// participants as leases: it may wait for them, never over-admit. The
// other way round, the trace is created with the listing of leases/ sent
// behind it, and any child that is not a trace (a V2 lease, Curator's or
// ours) refuses the attempt. Of a V2 lease and our trace, whichever was
// created second is seen by its creator's listing (ZooKeeper orders the
// two creates, and a session's read follows its own write), so at least
// one side always accounts for the other, including when both arrive at
// once.
type v1Driver struct{ s *Semaphore }

// Node is a protected EPHEMERAL_SEQUENTIAL "lock-" node directly under the
// path.
func (d v1Driver) Node() locking.NodeSpec {
	return locking.NodeSpec{Name: lockName, Mode: framework.EphemeralSequential, Data: d.s.opts.data}
}

// Sequence reads the number after "lock-".
func (v1Driver) Sequence(child string) (int32, bool) { return locking.Sequence(child, lockName) }

// Begin leaves the attempt's trace in leases/ and refuses the path if
// leases/ holds anything else. The trace lives as long as the attempt's
// node (Attempt.Nodes), in the same session (Attempt.Session).
func (d v1Driver) Begin(ctx context.Context, _ bool) (locking.Attempt, error) {
	s := d.s
	var (
		st      zk.Stat
		listing []string
	)
	trace, err := s.c.Create(ctx, framework.JoinPath(framework.JoinPath(s.path, leasesDir), traceName), s.opts.data,
		framework.WithMode(framework.EphemeralSequential), framework.Protected(), framework.CreatingParentContainers(),
		framework.StoringStatIn(&st), framework.ListingParent(&listing))
	if err != nil {
		if trace != "" {
			s.dropTrace(ctx, trace)
		}
		return locking.Attempt{}, fmt.Errorf("a V1 participant's trace in %s/: %w", leasesDir, err)
	}
	if lease, ok := v2Lease(listing); ok {
		s.dropTrace(ctx, trace)
		s.dropEmptyDirs(ctx)
		return locking.Attempt{}, fmt.Errorf("%w: V1 semaphore found V2 lease %q", ErrLayoutMismatch, leasesDir+"/"+lease)
	}
	return locking.Attempt{Nodes: []string{trace}, Session: st.EphemeralOwner}, nil
}

// dropTrace deletes a trace of ours, guaranteed, on the clean-up context.
func (s *Semaphore) dropTrace(ctx context.Context, trace string) {
	dctx, cancel := s.c.CleanupContext(ctx)
	defer cancel()
	if err := s.c.Delete(dctx, trace, framework.Guaranteed(), framework.Quietly()); err != nil {
		s.log.Debug("trace delete continues in the background", zap.String("node", trace), zap.Error(err))
	}
}

// GetsTheLock admits nobody while the limit is below 1; otherwise it is
// the standard driver's.
func (v1Driver) GetsTheLock(l locking.Listing) (locking.Verdict, error) {
	if l.Limit < 1 {
		// Nothing ahead can let us in: watch our own node (it changes only
		// if it goes) and wait for the limit to change.
		return locking.Verdict{Watch: l.Own}, nil
	}
	return locking.StandardDriver{LockName: lockName}.GetsTheLock(l)
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
