package semaphore

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locking"
	"github.com/gocurator/curator/recipes/mutex"
)

// The V2 layout (Curator's InterProcessSemaphoreV2).
const (
	locksDir  = "locks"  // the gate mutex's directory
	leasesDir = "leases" // the lease nodes' directory
	leaseName = "lease-" // base name of lease nodes
)

// acquireV2 runs Curator's V2 protocol: the lock loop with v2Driver. On
// failure it also removes the V2 directories if they are left empty (see
// dropEmptyDirs).
func (s *Semaphore) acquireV2(ctx context.Context, wait bool) (*Lease, error) {
	h, err := take(ctx, s.loop, wait)
	if err != nil {
		s.dropEmptyDirs(ctx)
		return nil, err
	}
	return newLease(s.path, h), nil
}

// dropEmptyDirs deletes "leases" and "locks" if they are empty, after a
// failed acquire (V2, or V1's refused trace) has deleted its own nodes: a
// failed acquire leaves no container it may have made either. A directory
// with a node in it stays (deleting a non-empty node fails; "leases" may
// hold V1 traces while "locks" is empty). Empty containers are the
// server's to reap anyway, and acquirers recreate them as needed, so
// deleting one that another acquirer made harms nobody. Best effort,
// within the client's CleanupContext bounds: failures are logged only.
// While disconnected it does nothing (our node deletes went to the
// background, so the directories are not empty yet); the server reaps the
// containers once they are empty.
func (s *Semaphore) dropEmptyDirs(ctx context.Context) {
	dctx, cancel := s.c.CleanupContext(ctx)
	defer cancel()
	for _, dir := range []string{leasesDir, locksDir} {
		err := s.c.Delete(dctx, framework.JoinPath(s.path, dir), framework.Quietly())
		if err != nil && !errors.Is(err, zk.ErrNotEmpty) {
			s.log.Debug("deleting an empty V2 directory", zap.String("dir", dir), zap.Error(err))
			return
		}
	}
}

// v2Driver is Curator's InterProcessSemaphoreV2 on the lock loop. Each
// attempt takes the gate mutex at "locks" (Begin), creates its lease node
// in "leases" and, after the V1 check (Check), holds iff leases/ has at
// most max children, counting every child as Curator does; else it waits,
// still the one gate holder, on a children watch of leases/, a change of
// the maximum, or the loss of the gate (Abort: another acquirer may pass
// the gate then and wait beside us; two waiting lease nodes count each
// other and can block for ever, so the attempt starts over). The loop
// deletes the lease node of a failed attempt and then ends it (End
// releases the gate), in every case.
type v2Driver struct{ s *Semaphore }

// Layout puts the lease nodes in leases/ and decides on all of its
// children, on a children watch.
func (v2Driver) Layout() locking.Layout {
	return locking.Layout{Dir: leasesDir, AllChildren: true, WatchChildren: true}
}

// Node is a protected EPHEMERAL_SEQUENTIAL "lease-" node.
func (d v2Driver) Node() locking.NodeSpec {
	return locking.NodeSpec{Name: leaseName, Mode: framework.EphemeralSequential, Data: d.s.opts.data}
}

// Sequence reads the number after "lease-".
func (v2Driver) Sequence(child string) (int32, bool) { return locking.Sequence(child, leaseName) }

// GetsTheLock holds iff there are at most Limit children. Curator counts
// every child of leases/, foreign ones included, and so must we: counting
// fewer would admit more than Java does.
func (v2Driver) GetsTheLock(l locking.Listing) (locking.Verdict, error) {
	return locking.Verdict{Held: l.Limit >= 1 && len(l.Sorted) <= l.Limit}, nil
}

// Begin takes the gate (without waiting for another acquirer unless
// wait). A handle per attempt: the mutex is reentrant per handle, and two
// goroutines must not both believe they hold the gate.
func (d v2Driver) Begin(ctx context.Context, wait bool) (locking.Attempt, error) {
	s := d.s
	gate := mutex.New(s.c, framework.JoinPath(s.path, locksDir), mutex.WithTelemetryName(s.gateName()))
	if wait {
		if err := gate.Acquire(ctx); err != nil {
			return locking.Attempt{}, err
		}
	} else {
		ok, err := gate.TryAcquire(ctx)
		if err != nil {
			return locking.Attempt{}, err
		}
		if !ok {
			return locking.Attempt{}, locking.ErrWouldBlock
		}
	}
	return locking.Attempt{
		Abort: gate.Done(),
		Check: s.noV1,
		End:   func(ctx context.Context) { s.releaseGate(ctx, gate) },
	}, nil
}

// gateName is the telemetry name of the V2 gate: the semaphore's name with
// "/locks" after it, so that WithTelemetryName bounds the gate's series as
// it does the leases'.
func (s *Semaphore) gateName() string {
	if s.opts.telemetryName == "" {
		return framework.JoinPath(s.path, locksDir)
	}
	return s.opts.telemetryName + "/" + locksDir
}

// noV1 fails with ErrLayoutMismatch if the path holds V1 participants: a
// V1 participant's trace in leases/ (listing, listed behind our lease's
// create), or a V1 node under the path (a V1 semaphore of Curator's, which
// leaves no trace, or a mutex); or a read/write lock's nodes. Our lease node exists when it is called, so
// a V1 acquirer whose trace is created after it sees our lease and
// refuses, and one whose trace came first is in listing; the V2 counting
// is safe either way, since every trace counts as a lease.
func (s *Semaphore) noV1(ctx context.Context, listing []string) error {
	if listing == nil {
		var err error
		if listing, _, err = s.c.Children(ctx, framework.JoinPath(s.path, leasesDir)); err != nil {
			return err
		}
	}
	for _, c := range listing {
		if isTrace(c) {
			return fmt.Errorf("%w: V2 semaphore found V1 participant %q", ErrLayoutMismatch, leasesDir+"/"+c)
		}
	}
	if err := locking.CheckForeign(ctx, s.c, s.path, nil, locking.MutexLayout, locking.ReadWriteLayout, locking.LatchLayout); err != nil {
		return fmt.Errorf("V2 semaphore: %w", err)
	}
	return nil
}

// releaseGate releases the gate on the clean-up context (the client's CleanupContext);
// the delete is guaranteed, so it goes on in the background if it fails.
func (s *Semaphore) releaseGate(ctx context.Context, gate *mutex.Mutex) {
	dctx, cancel := s.c.CleanupContext(ctx)
	defer cancel()
	if err := gate.Release(dctx); err != nil {
		s.log.Debug("gate release", zap.Error(err))
	}
}
