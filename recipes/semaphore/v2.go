package semaphore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

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

// errAgain means this attempt cannot go on (our lease node vanished or
// belongs to a dead session, or the gate was lost while we waited behind
// it): clean up and start over, under the retry policy.
var errAgain = errors.New("lease node or gate lost")

// acquireV2 runs Curator's V2 protocol. On failure it also removes the V2
// directories if they are left empty (see dropEmptyDirs).
func (s *Semaphore) acquireV2(ctx context.Context, wait bool) (*Lease, error) {
	l, err := s.attemptsV2(ctx, wait)
	if err != nil {
		s.dropEmptyDirs(ctx)
	}
	return l, err
}

// attemptsV2 runs attempts of the protocol, starting over under the
// client's retry policy when an attempt loses its node or its gate.
func (s *Semaphore) attemptsV2(ctx context.Context, wait bool) (*Lease, error) {
	start := time.Now()
	for retries := 0; ; retries++ {
		l, err := s.attemptV2(ctx, wait)
		if !errors.Is(err, errAgain) {
			return l, err
		}
		sleep, ok := s.c.RetryPolicy().AllowRetry(retries, time.Since(start))
		if !ok {
			return nil, fmt.Errorf("%w: lease node or gate lost %d times while waiting", ErrLockLost, retries+1)
		}
		s.log.Info("lease node or gate lost while waiting; starting over")
		if err := locking.Sleep(ctx, s.c, sleep); err != nil {
			return nil, err
		}
	}
}

// dropEmptyDirs deletes "leases" and then "locks" if they are empty, after a
// failed V2 acquire has deleted its own nodes: a failed acquire leaves no
// container it may have made either. A directory with a node in it stays
// (deleting a non-empty node fails), and so does "locks" while "leases" has
// leases. Empty containers are the server's to reap anyway, and V2
// acquirers recreate them as needed, so deleting one that another acquirer
// made harms nobody. Best effort, within the client's CleanupContext bounds: failures
// are logged only. While disconnected it does nothing (our node deletes went
// to the background, so the directories are not empty yet); the server
// reaps the containers once they are empty.
func (s *Semaphore) dropEmptyDirs(ctx context.Context) {
	dctx, cancel := s.c.CleanupContext(ctx)
	defer cancel()
	for _, dir := range []string{leasesDir, locksDir} {
		err := s.c.Delete(dctx, framework.JoinPath(s.path, dir), framework.Quietly())
		if errors.Is(err, zk.ErrNotEmpty) {
			return
		}
		if err != nil {
			s.log.Debug("deleting an empty V2 directory", zap.String("dir", dir), zap.Error(err))
			return
		}
	}
}

// attemptV2 is one pass of the protocol: take the gate, create the lease
// node, hold iff the leases directory has at most max children, else wait
// (as the one gate holder) for a change. The lease node is deleted on every
// failure, then the gate is released, in every case.
func (s *Semaphore) attemptV2(ctx context.Context, wait bool) (lease *Lease, err error) {
	// A handle per attempt: the mutex is reentrant per handle, and two
	// goroutines must not both believe they hold the gate.
	gate := mutex.New(s.c, framework.JoinPath(s.path, locksDir))
	if wait {
		if err := gate.Acquire(ctx); err != nil {
			return nil, err
		}
	} else {
		ok, err := gate.TryAcquire(ctx)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, ErrNoLease
		}
	}
	defer s.releaseGate(ctx, gate)

	// The lease node's Stat comes with the create (no extra request
	// while we hold the gate, which every acquirer waits through).
	var stat zk.Stat
	node, err := s.c.Create(ctx, framework.JoinPath(framework.JoinPath(s.path, leasesDir), leaseName), s.opts.data,
		framework.WithMode(framework.EphemeralSequential), framework.Protected(), framework.CreatingParentContainers(),
		framework.StoringStatIn(&stat))
	if node != "" {
		defer func() {
			if lease == nil {
				s.deleteNode(ctx, node)
			}
		}()
	}
	if err != nil {
		return nil, err
	}
	return s.waitV2(ctx, node, &stat, gate, wait)
}

// waitV2 decides for our lease node, waiting for changes of the leases
// directory and of the maximum while it holds the gate.
func (s *Semaphore) waitV2(ctx context.Context, node string, stat *zk.Stat, gate *mutex.Mutex, wait bool) (*Lease, error) {
	_, own := framework.SplitPath(node)
	watch := false // list with a watch: set once we have to wait
	first := true  // the first look also checks the layout
	// ch is the pending children watch, nil when none is armed. A look
	// caused by a change of the maximum keeps it rather than arm another:
	// each would live (a goroutine each, in a namespace) until leases/
	// changes, one more per change of the maximum.
	var ch <-chan zk.Event
	for {
		max, changed := s.limit()
		arm := watch && ch == nil
		children, wch, st, err := s.listV2(ctx, node, first, stat == nil, arm)
		first = false
		if arm {
			ch = wch
		}
		if errors.Is(err, zk.ErrNoNode) {
			// leases/ (or the path) is gone, so our node is too: the
			// container was reaped after our session ended.
			return nil, errAgain
		}
		if err != nil {
			return nil, err
		}
		if st != nil {
			stat = st
		}
		if stat == nil || stat.EphemeralOwner != s.c.SessionID() || !contains(children, own) {
			return nil, errAgain
		}
		// Curator counts every child of leases/, foreign ones included, and
		// so must we: counting fewer would admit more than Java does.
		if max >= 1 && len(children) <= max {
			return newLease(s.path, locking.NewHold(s.c, node, stat, s.log)), nil
		}
		if !wait {
			return nil, ErrNoLease
		}
		if !watch {
			// The first listing set no watch, so that an admitted acquire
			// leaves none behind; list again with one.
			watch = true
			continue
		}
		select {
		case ev := <-ch:
			s.log.Debug("leases changed", zap.Stringer("event", ev.Type))
			ch = nil // fired: the next look arms a new one
		case <-changed:
		case <-gate.Done():
			// Another acquirer may pass the gate now and wait beside us;
			// two waiting lease nodes count each other and can block for
			// ever (max 1: both see 2 children). Start over.
			return nil, errAgain
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.c.Done():
			return nil, framework.ErrClosed
		}
	}
}

// listV2 lists leases/ (with a children watch if watch); on the first look
// it also checks the path for V1 participants, and with withStat it reads
// our node's Stat. The reads run concurrently. A nil Stat with no error
// means our node is gone.
func (s *Semaphore) listV2(ctx context.Context, node string, first, withStat, watch bool) ([]string, <-chan zk.Event, *zk.Stat, error) {
	var (
		children []string
		ch       <-chan zk.Event
		stat     *zk.Stat
	)
	dir := framework.JoinPath(s.path, leasesDir)
	fns := []func() error{func() (err error) {
		if watch {
			children, _, ch, err = s.c.ChildrenW(ctx, dir)
		} else {
			children, _, err = s.c.Children(ctx, dir)
		}
		return err
	}}
	if withStat {
		fns = append(fns, func() (err error) {
			stat, err = s.c.Exists(ctx, node)
			return err
		})
	}
	if first {
		fns = append(fns,
			func() error {
				// Our lease node exists now, so a V1 semaphore that lists
				// the path after this sees our leases/ directory, and one
				// that listed it before made its node before ours: one of
				// the two always notices the other.
				top, _, err := s.c.Children(ctx, s.path)
				if err != nil {
					return err
				}
				for _, c := range top {
					if _, ok := locking.Sequence(c, lockName); ok {
						return fmt.Errorf("%w: V2 semaphore found V1 participant %q", ErrLayoutMismatch, c)
					}
				}
				return nil
			})
	}
	if err := parallel(fns...); err != nil {
		return nil, nil, nil, err
	}
	return children, ch, stat, nil
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

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
