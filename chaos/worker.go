package chaos

import (
	"context"
	"math/rand"
	"strconv"
	"time"

	"github.com/gocurator/curator/framework"
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
		check := func() (framework.Op, error) { return l.CheckOp(), nil }
		return &hold{done: l.Done(), token: l.FencingToken(), check: check, release: l.Release}, nil
	}
}

var (
	_ locker = (*mutex.Mutex)(nil)
	_ locker = (*rwlock.Lock)(nil)
)

// worker loops acquire, one fenced write, a short hold, release, recording
// each hold as its holder believed it.
type worker struct {
	name     string
	recipe   string
	resource string // "" for no fenced write
	c        *framework.Client
	acquire  acquireFunc
	rec      *recorder
	rng      *rand.Rand
	st       time.Duration

	// For the checker's own test: a broken holder that ignores Done and
	// believes it holds until it releases, holding for holdFor.
	ignoreDone bool
	holdFor    time.Duration
}

func (w *worker) run(ctx context.Context) {
	for ctx.Err() == nil {
		w.once(ctx)
	}
}

func (w *worker) once(ctx context.Context) {
	actx, cancel := context.WithTimeout(ctx, 3*w.st)
	h, err := w.acquire(actx)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return // stopping, not a failure
		}
		w.rec.acquireFailed(w.recipe)
		sleep(ctx, 50*time.Millisecond)
		return
	}
	start := time.Now()
	if w.recipe == RecipeMutex {
		w.rec.mutexAcquired(start)
	}
	// Stamp the moment Done closes: from then on the holder must not believe
	// it holds, whatever it is doing.
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
			wr := Write{Recipe: w.recipe, Holder: w.name, Token: h.token}
			if err == nil && len(res) == 2 && res[1].Stat != nil {
				wr.Version = res[1].Stat.Version
			}
			w.rec.write(wr, err)
		}
	}

	d := time.Duration(5+w.rng.Intn(45)) * time.Millisecond
	if w.holdFor > 0 {
		d = w.holdFor
	}
	done := h.done
	if w.ignoreDone {
		done = nil
	}
	t := time.NewTimer(d)
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
	}
	t.Stop()

	end := time.Now()
	rctx, cancel := context.WithTimeout(detached, w.st)
	_ = h.release(rctx) // ErrLockLost after a loss; deletes go on in the background
	cancel()
	close(stop)
	<-exited
	lost := false
	select {
	case at := <-seen:
		if at.Before(end) && !w.ignoreDone {
			end, lost = at, true
		}
	default:
	}
	w.rec.hold(Interval{Recipe: w.recipe, Holder: w.name, Start: start, End: end, Token: h.token, Lost: lost})
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
