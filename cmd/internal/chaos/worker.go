package chaos

import (
	"context"
	"math/rand"
	"strconv"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/leader"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/recipes/rwlock"
	"github.com/gocurator/curator/recipes/semaphore"
)

// hold is one held lock or lease, whatever the recipe.
type hold struct {
	done    <-chan struct{}
	token   int64
	check   func() (framework.Op, error)
	release func(context.Context) error
}

type acquireFunc func(ctx context.Context) (*hold, error)

// locker is what mutex.Mutex and rwlock.Lock have in common.
type locker interface {
	Acquire(ctx context.Context) error
	Done() <-chan struct{}
	FencingToken() int64
	CheckOp() (framework.Op, error)
	Release(ctx context.Context) error
}

func lockerAcquire(l locker) acquireFunc {
	return func(ctx context.Context) (*hold, error) {
		if err := l.Acquire(ctx); err != nil {
			return nil, err
		}
		return &hold{done: l.Done(), token: l.FencingToken(), check: l.CheckOp, release: l.Release}, nil
	}
}

func semaphoreAcquire(s *semaphore.Semaphore) acquireFunc {
	return func(ctx context.Context) (*hold, error) {
		l, err := s.Acquire(ctx)
		if err != nil {
			return nil, err
		}
		check := l.CheckOp
		return &hold{done: l.Done(), token: l.FencingToken(), check: check, release: l.Release}, nil
	}
}

// campaign makes an election's participant a worker: a hold is a term,
// its token the term's, its fenced write guarded by the term's CheckOp,
// its release a Resign.
func campaign(e *leader.Election) acquireFunc {
	return func(ctx context.Context) (*hold, error) {
		t, err := e.Campaign(ctx)
		if err != nil {
			return nil, err
		}
		check := t.CheckOp
		return &hold{done: t.Done(), token: t.Token(), check: check, release: t.Resign}, nil
	}
}

var (
	_ locker = (*mutex.Mutex)(nil)
	_ locker = (*rwlock.Lock)(nil)
)

// worker loops acquire, one fenced write, a hold, release, recording each
// hold as its holder believed it.
type worker struct {
	name     string
	workload string
	recipe   string
	lock     string // the lock's path, for the checker
	resource string // "" for no fenced write
	client   int
	c        *framework.Client
	acquire  acquireFunc
	rec      *recorder
	rng      *rand.Rand
	st       time.Duration

	// window, for the cohort workers, is their client's timed-cut window:
	// a hold begun while it is armed lasts until Done closes or the
	// window ends.
	window *cutWindow

	// For the checker's own test: a broken holder that ignores Done and
	// believes it holds until it releases, holding for holdFor.
	ignoreDone bool
	holdFor    time.Duration
}

// holdTime is how long the worker plans to hold: a few milliseconds, or for
// the long mutex one to two session timeouts, so that a partition that
// starts with the hold outlasts the holder's session while it still plans
// to hold; an election's term either.
func (w *worker) holdTime() time.Duration {
	switch {
	case w.holdFor > 0:
		return w.holdFor
	case w.recipe == RecipeLongMutex:
		return w.st + time.Duration(w.rng.Int63n(int64(w.st)))
	case w.recipe == RecipeElection && w.rng.Intn(2) == 0:
		// Half the terms last half a session timeout to one, so that
		// partitions often catch a leader in the middle of its term.
		return w.st/2 + time.Duration(w.rng.Int63n(int64(w.st/2)))
	default:
		return time.Duration(5+w.rng.Intn(45)) * time.Millisecond
	}
}

// acquireTimeout bounds one Acquire: long enough to wait for the holders
// ahead in the queue.
func (w *worker) acquireTimeout() time.Duration {
	if w.recipe == RecipeLongMutex {
		return 8 * w.st
	}
	return 3 * w.st
}

func (w *worker) run(ctx context.Context) {
	for ctx.Err() == nil {
		w.once(ctx)
	}
}

func (w *worker) once(ctx context.Context) {
	actx, cancel := context.WithTimeout(ctx, w.acquireTimeout())
	h, err := w.acquire(actx)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return // stopping, not a failure
		}
		w.rec.acquireFailed(w.recipe)
		w.window.refuse(time.Now())
		sleep(ctx, 50*time.Millisecond)
		return
	}
	iv := Interval{Workload: w.workload, Recipe: w.recipe, Lock: w.lock, Client: w.client,
		Holder: w.name, Start: time.Now(), Token: h.token}
	w.rec.acquiredAt(iv)
	until := w.window.grant(iv.Start)
	// Stamp the moment Done closes: from then on the holder must not believe
	// it holds, whatever it is doing (a fenced write, say).
	stop, exited := make(chan struct{}), make(chan struct{})
	seen := make(chan time.Time, 1)
	go func() {
		defer close(exited)
		select {
		case <-h.done:
			seen <- time.Now()
		case <-stop:
		}
	}()

	detached := context.WithoutCancel(ctx)
	if w.resource != "" {
		if op, err := h.check(); err == nil {
			wctx, cancel := context.WithTimeout(detached, w.st)
			data := []byte(strconv.FormatInt(h.token, 10))
			res, err := w.c.Multi(wctx, op, framework.SetOp(w.resource, data, -1))
			cancel()
			wr := Write{Workload: w.workload, Recipe: w.recipe, Resource: w.resource, Holder: w.name, Client: w.client, Token: h.token}
			if err == nil && len(res) == 2 && res[1].Stat != nil {
				wr.Version = res[1].Stat.Version
			}
			w.rec.write(wr, err)
		}
	}

	// Hold until Done closes or the planned time is up; no sampling.
	done := h.done
	if w.ignoreDone {
		done = nil
	}
	var planned <-chan time.Time
	if until == nil {
		t := time.NewTimer(w.holdTime())
		defer t.Stop()
		planned = t.C
	}
	select {
	case <-done:
		iv.Lost = true
	case <-planned:
	case <-until:
	case <-ctx.Done():
	}

	// The belief ends here, as Release is called, or earlier, at the
	// instant Done was seen closed.
	iv.End = time.Now()
	rctx, cancel := context.WithTimeout(detached, w.st)
	_ = h.release(rctx) // ErrLockLost after a loss; deletes go on in the background
	cancel()
	close(stop)
	<-exited
	select {
	case at := <-seen:
		// Done closed by the Release call itself is not a loss.
		if !w.ignoreDone && (iv.Lost || !at.After(iv.End)) {
			iv.Lost = true
			if at.Before(iv.End) {
				iv.End = at
			}
		}
	default:
	}
	w.rec.hold(iv)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
