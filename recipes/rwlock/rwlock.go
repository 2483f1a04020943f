package rwlock

import (
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/fanout"
	"github.com/gocurator/curator/recipes/locking"
)

// RWLock is a distributed read/write lock: a pair of locks on one path, the
// read lock shared by any number of holders while no writer holds, the write
// lock exclusive. Both are fair: each is granted in the order requested
// (ZooKeeper's order), so a queued writer is not starved by readers that
// came after it.
//
// The *RWLock value is the owner (Go has no thread identity): each of its
// locks is reentrant, its write-lock holder may take its read lock at once
// (downgrade), and goroutines that must exclude each other use RWLocks of
// their own. Methods are safe for concurrent use.
type RWLock struct {
	read, write *Lock

	// writeChanged is notified whenever the write lock's hold starts or
	// ends: a read acquire waiting behind our own write node then looks
	// again, since that node no longer blocks it once held.
	writeChanged fanout.Signal
}

// New returns a read/write lock on path. It does no I/O; a nil client or an
// invalid path is reported by every call of either lock (ErrNilClient,
// ErrInvalidPath).
func New(c *framework.Client, path string, opts ...Option) *RWLock {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	rw := &RWLock{}
	// A mutex's (or V1 semaphore's, or LeaderSelector's) nodes, a leader
	// latch's, or a semaphore's leases, on the path would be ignored by
	// our drivers, and ours by theirs.
	lopts := []locking.Option{locking.WithName(o.telemetryName),
		locking.RefusingLayouts(locking.MutexLayout, locking.LatchLayout, locking.SemaphoreV2Layout)}
	if c != nil {
		lopts = append(lopts, locking.WithLogger(c.Logger().Named("rwlock")))
	}
	wd := writeDriver{data: o.data}
	rw.write = newLock(rw, writeSide, locking.New(c, path, wd, append(lopts, locking.WithInvalid(o.err))...), wd, o.localHandover)
	rd := &readDriver{data: o.data, ownWrite: rw.write.heldName}
	rw.read = newLock(rw, readSide, locking.New(c, path, rd, append(lopts, locking.WithLimit(rw.readLimit), locking.WithInvalid(o.err))...), rd, 0)
	return rw
}

// ReadLock returns the shared lock. Every call returns the same handle.
func (rw *RWLock) ReadLock() *Lock {
	if rw == nil {
		return nil
	}
	return rw.read
}

// WriteLock returns the exclusive lock. Every call returns the same handle.
func (rw *RWLock) WriteLock() *Lock {
	if rw == nil {
		return nil
	}
	return rw.write
}

// readLimit is the read lock's limit for the loop: no count (one holder
// per node, as the read driver decides), and the channel closed at the next
// change of the write lock's hold, an input of the read driver.
func (rw *RWLock) readLimit() (int, <-chan struct{}) { return 1, rw.writeChanged.C() }

// notify wakes read acquires waiting on the write lock's hold.
func (rw *RWLock) notify() { rw.writeChanged.Notify() }
