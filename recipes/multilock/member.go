package multilock

import (
	"context"
	"strings"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/recipes/rwlock"
	"github.com/gocurator/curator/recipes/semaphore"
)

// Member is one lock of a MultiLock, made by Mutex, Read, Write,
// SemaphoreMutex or Lease from a handle of its recipe. The multi-lock
// acquires and releases the handle with the handle's own verbs, so a member
// is exactly that lock on the wire (Curator's processes see it as one) and
// keeps that handle's semantics (a Mutex member is reentrant with the
// handle's other holds, a Lease member is one more lease). The zero Member
// is invalid.
type Member struct {
	path string
	// rank orders members at one path: the write lock before the read
	// lock of the same RWLock (a downgrade; the other order is an upgrade,
	// which is refused), then leases.
	rank  int
	kind  string
	owner any // the handle, to tell members of one RWLock
	// acquire takes the lock; with wait false it must not wait for
	// another holder and returns a nil held and no error when busy.
	acquire func(ctx context.Context, wait bool) (held, error)
}

// held is an acquired member: the verbs every hold of the lock recipes
// shares.
type held interface {
	Release(ctx context.Context) error
	Done() <-chan struct{}
	Err() error
	CheckOp() (framework.Op, error)
}

const (
	rankWrite = iota
	rankRead
	rankOther
)

// Mutex is the member that holds m (Curator's InterProcessMutex). m is
// reentrant: a hold the handle has already makes the member's acquire
// return at once, and its release gives back that one hold.
func Mutex(m *mutex.Mutex) Member {
	return Member{path: m.Path(), rank: rankOther, kind: "mutex", owner: m,
		acquire: func(ctx context.Context, wait bool) (held, error) {
			return take(ctx, wait, m, m.Acquire, m.TryAcquire)
		}}
}

// Read is the member that holds the read lock of rw.
func Read(rw *rwlock.RWLock) Member {
	k := rw.ReadLock()
	return Member{path: rw.Path(), rank: rankRead, kind: "read lock", owner: rw,
		acquire: func(ctx context.Context, wait bool) (held, error) {
			return take(ctx, wait, k, k.Acquire, k.TryAcquire)
		}}
}

// Write is the member that holds the write lock of rw. With Read(rw) in the
// same multi-lock, the write lock is taken first and the read lock then
// granted at once (a downgrade).
func Write(rw *rwlock.RWLock) Member {
	k := rw.WriteLock()
	return Member{path: rw.Path(), rank: rankWrite, kind: "write lock", owner: rw,
		acquire: func(ctx context.Context, wait bool) (held, error) {
			return take(ctx, wait, k, k.Acquire, k.TryAcquire)
		}}
}

// SemaphoreMutex is the member that holds m (Curator's
// InterProcessSemaphoreMutex). m is not reentrant: while it is held
// elsewhere the member waits for that hold's Release.
func SemaphoreMutex(m *semaphore.Mutex) Member {
	return Member{path: m.Path(), rank: rankOther, kind: "semaphore mutex", owner: m,
		acquire: func(ctx context.Context, wait bool) (held, error) {
			return take(ctx, wait, m, m.Acquire, m.TryAcquire)
		}}
}

// Lease is the member that holds one lease of s, taken when the multi-lock
// is acquired and returned when it is released. Several Lease members of
// one semaphore take that many leases.
func Lease(s *semaphore.Semaphore) Member {
	return Member{path: s.Path(), rank: rankOther, kind: "lease of", owner: s,
		acquire: func(ctx context.Context, wait bool) (held, error) {
			if wait {
				l, err := s.Acquire(ctx)
				if err != nil {
					return nil, err
				}
				return l, nil
			}
			l, ok, err := s.TryAcquire(ctx)
			if err != nil || !ok {
				return nil, err
			}
			return l, nil
		}}
}

// take acquires a lock handle h with its blocking or its try verb.
func take(ctx context.Context, wait bool, h held, acquire func(context.Context) error, try func(context.Context) (bool, error)) (held, error) {
	if wait {
		if err := acquire(ctx); err != nil {
			return nil, err
		}
		return h, nil
	}
	ok, err := try(ctx)
	if err != nil || !ok {
		return nil, err
	}
	return h, nil
}

// String names the member in errors: its kind and its path.
func (m Member) String() string {
	if m.acquire == nil {
		return "zero member"
	}
	return m.kind + " " + m.path
}

// before reports whether a is acquired before b: by path, compared segment
// by segment (a parent before its children; the same order in every
// process and every namespace), then by rank.
func before(a, b Member) bool {
	if c := comparePaths(a.path, b.path); c != 0 {
		return c < 0
	}
	return a.rank < b.rank
}

// comparePaths compares two ZooKeeper paths segment by segment.
func comparePaths(a, b string) int {
	as := strings.Split(strings.TrimPrefix(a, "/"), "/")
	bs := strings.Split(strings.TrimPrefix(b, "/"), "/")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if c := strings.Compare(as[i], bs[i]); c != 0 {
			return c
		}
	}
	return len(as) - len(bs)
}
