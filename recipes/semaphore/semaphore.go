package semaphore

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locking"
)

// Semaphore is a distributed counting semaphore: at most a maximum number
// of leases are held at once, across every process that uses the path.
// It is not reentrant: every Acquire takes one more lease, whoever calls
// it. Methods are safe for concurrent use; the Semaphore value holds no
// state between calls, so one per path per client is enough. A nil
// *Semaphore is safe too: its acquires and Participants return
// ErrNilHandle.
type Semaphore struct {
	c    *framework.Client
	path string
	max  int
	opts options
	err  error // bad input found by New, returned by every call
	log  *zap.Logger
	// loop is the lock loop every acquire runs, V1's or V2's: the limit
	// comes from limit, read at every look, and no acquire keeps state
	// on it or on its driver.
	loop *locking.Loop
}

// New returns a semaphore on path allowing maxLeases leases at once (or as
// many as the count of WithMaxLeasesFrom), in the layout of Curator's
// InterProcessSemaphoreV2 unless CuratorV1 is given (see the package
// documentation for both and how they refuse each other). It does no I/O: a nil client, an
// invalid path (or the root) or maxLeases below 1 is reported by every
// later call (ErrNilClient, ErrInvalidPath, ErrInvalidMaxLeases).
func New(c *framework.Client, path string, maxLeases int, opts ...Option) *Semaphore {
	s := &Semaphore{c: c, path: path, max: maxLeases, log: zap.NewNop()}
	for _, o := range opts {
		if o != nil {
			o(&s.opts)
		}
	}
	switch {
	case c == nil:
		s.err = ErrNilClient
	case s.opts.countSet && s.opts.count == nil:
		s.err = fmt.Errorf("%w: nil count", ErrInvalidMaxLeases)
	case !s.opts.countSet && maxLeases < 1:
		s.err = fmt.Errorf("%w: %d, must be at least 1", ErrInvalidMaxLeases, maxLeases)
	default:
		if err := framework.ValidatePath(path); err != nil {
			s.err = err
		} else if path == "/" {
			s.err = fmt.Errorf("%w: a semaphore cannot live at the root", ErrInvalidPath)
		}
		s.log = c.Logger().Named("semaphore").With(zap.String("path", path))
		var d locking.Driver = v2Driver{s}
		// V2's look for other layouts at the path is its Check (noV1):
		// its loop's directory is leases/.
		var refuse locking.Option
		if s.opts.v1 {
			d = v1Driver{s}
			// A V1 semaphore's nodes are a mutex's: the V2 layout is
			// found by its trace's listing (Begin).
			refuse = locking.RefusingLayouts(locking.ReadWriteLayout, locking.LatchLayout)
		}
		s.loop = locking.New(c, path, d, locking.WithLogger(s.log), locking.WithLimit(s.limit),
			locking.WithName(s.opts.telemetryName), refuse)
	}
	return s
}

// Path returns the semaphore's path ("" for a nil Semaphore).
func (s *Semaphore) Path() string {
	if s == nil {
		return ""
	}
	return s.path
}

// MaxLeases returns the current maximum: New's maxLeases, or the cached
// value of the WithMaxLeasesFrom count (0 for a nil Semaphore).
func (s *Semaphore) MaxLeases() int {
	if s == nil {
		return 0
	}
	max, _ := s.limit()
	return max
}

// Acquire blocks until it holds a lease or ctx ends (use a ctx deadline for
// a timeout). On failure nothing is held and no lease or gate node is left
// (see "Nothing left behind" in docs/design.md), and the error is never
// nil: ctx's error, framework.ErrClosed, ErrLayoutMismatch, a shared
// count's error, or the ZooKeeper error the retry policy gave up on.
func (s *Semaphore) Acquire(ctx context.Context) (*Lease, error) {
	if s == nil {
		return nil, ErrNilHandle
	}
	l, err := s.acquire(ctx, true)
	if err != nil {
		return nil, fmt.Errorf("semaphore %s: acquire: %w", s.path, err)
	}
	return l, nil
}

// TryAcquire takes a lease only if one is free now: it never waits for
// another holder (it does wait for the network). When none is free it
// returns (nil, false, nil) and leaves the semaphore unchanged (no node);
// on failure it returns a non-nil error and leaves the semaphore unchanged.
// In V2 mode, like Curator's acquire with a zero wait, it also reports
// false while another acquirer is passing the gate. This is every handle's
// busy convention: busy is a false, not an error.
func (s *Semaphore) TryAcquire(ctx context.Context) (*Lease, bool, error) {
	if s == nil {
		return nil, false, ErrNilHandle
	}
	l, err := s.acquire(ctx, false)
	if errors.Is(err, errBusy) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("semaphore %s: try acquire: %w", s.path, err)
	}
	return l, true, nil
}

// AcquireN takes n leases, all or nothing, under ctx's one deadline: it
// blocks until it holds all n, and on failure returns the leases it took
// already to the semaphore (releases them) before returning nil and the
// error. n must be between 1 and the current maximum
// (ErrInvalidLeaseCount). As in Curator, leases are taken one at a time, so
// two AcquireN callers can each hold part of what they need and wait for
// each other until their contexts end: give them a deadline.
func (s *Semaphore) AcquireN(ctx context.Context, n int) ([]*Lease, error) {
	if s == nil {
		return nil, ErrNilHandle
	}
	if err := s.check(ctx); err != nil {
		return nil, fmt.Errorf("semaphore %s: acquire %d: %w", s.path, n, err)
	}
	if max, _ := s.limit(); n < 1 || n > max {
		return nil, fmt.Errorf("semaphore %s: acquire %d: %w: must be in [1, %d]", s.path, n, ErrInvalidLeaseCount, max)
	}
	leases := make([]*Lease, 0, n)
	for len(leases) < n {
		l, err := s.acquire(ctx, true)
		if err != nil {
			s.releaseAll(ctx, leases)
			if len(leases) > 0 {
				// The failed acquire found our leases (V2) or traces (V1)
				// in leases/; now that they are back, it may be empty.
				s.dropEmptyDirs(ctx)
			}
			return nil, fmt.Errorf("semaphore %s: acquire %d (had %d): %w", s.path, n, len(leases), err)
		}
		leases = append(leases, l)
	}
	return leases, nil
}

// Participants returns the paths of the lease nodes, held and waiting, in
// sequence order (in V2 mode only holders and the one waiter at the gate
// have lease nodes). An absent path has none.
func (s *Semaphore) Participants(ctx context.Context) ([]string, error) {
	if s == nil {
		return nil, ErrNilHandle
	}
	if err := s.check(ctx); err != nil {
		return nil, fmt.Errorf("semaphore %s: participants: %w", s.path, err)
	}
	p, err := s.loop.Participants(ctx)
	if err != nil {
		return nil, fmt.Errorf("semaphore %s: %w", s.path, err)
	}
	return p, nil
}

// check reports bad input from New or a nil ctx, and starts the count of
// WithMaxLeasesFrom.
func (s *Semaphore) check(ctx context.Context) error {
	if s.err != nil {
		return s.err
	}
	if ctx == nil {
		return fmt.Errorf("%w: nil context", framework.ErrInvalidOption)
	}
	if s.opts.count != nil {
		if err := s.opts.count.Start(ctx); err != nil {
			return fmt.Errorf("max leases: %w", err)
		}
	}
	return nil
}

func (s *Semaphore) acquire(ctx context.Context, wait bool) (*Lease, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	if s.opts.v1 {
		return s.acquireV1(ctx, wait)
	}
	return s.acquireV2(ctx, wait)
}

// limit returns the current maximum and a channel closed when it changes
// (nil for a fixed maximum), taken at one instant.
func (s *Semaphore) limit() (int, <-chan struct{}) {
	if s.opts.count == nil {
		return s.max, nil
	}
	v, ch := s.opts.count.Watch()
	return v.Value, ch
}

// releaseAll returns leases taken by a failed AcquireN, on a context
// detached from the caller's (which may be what ended).
func (s *Semaphore) releaseAll(ctx context.Context, leases []*Lease) {
	if len(leases) == 0 {
		return
	}
	dctx, cancel := s.c.CleanupContext(ctx)
	defer cancel()
	for _, l := range leases {
		if err := l.Release(dctx); err != nil {
			s.log.Info("returning a lease continues in the background", zap.String("node", l.Node()), zap.Error(err))
		}
	}
}
