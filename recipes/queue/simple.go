package queue

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locking"
)

// simplePrefix is the name of SimpleDistributedQueue's nodes, before the
// server's sequence number (ZooKeeper's own queue recipe names them so).
const simplePrefix = "qn-"

// Simple is a queue in Curator's SimpleDistributedQueue layout (ZooKeeper's
// queue recipe): raw bytes in PERSISTENT_SEQUENTIAL nodes "qn-<seq>", taken
// lowest first by whoever deletes them first. It is safe for concurrent
// use, and its goroutines waiting in Take share one watch (see Take).
type Simple struct {
	c    *framework.Client
	path string
	bad  error
	turn chan struct{} // held by the one Take that watches the queue

	mu sync.Mutex
	// next holds, in order, the names of the last listing that no take
	// has tried yet: the next Take tries them before it lists again.
	next []string
	// spread is how far apart from other takers to start (takeFirst).
	spread spread

	waiting atomic.Int32 // tests: Takes that found the queue empty and wait
}

// NewSimple returns a handle on the simple queue at path. It does no I/O;
// bad input (nil client, invalid path) is reported by every call.
func NewSimple(c *framework.Client, path string) *Simple {
	s := &Simple{c: c, path: path, turn: make(chan struct{}, 1)}
	if c == nil {
		s.bad = ErrNilClient
	} else if err := validatePath(path); err != nil {
		s.bad = err
	}
	return s
}

func (s *Simple) check(ctx context.Context, verb string) error {
	if s == nil {
		return fmt.Errorf("queue: %s: %w", verb, ErrNilHandle)
	}
	if err := checkCtx(ctx); err != nil {
		return s.wrap(verb, err)
	}
	return s.wrap(verb, s.bad)
}

func (s *Simple) wrap(verb string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("simple queue %s: %s: %w", s.path, verb, err)
}

// Offer adds data at the tail of the queue, as is (no framing: Curator's
// SimpleDistributedQueue stores raw bytes). The queue's node is made as a
// container if missing, as Curator does. Data over jute.maxbuffer is
// refused with ErrDataTooLarge, unsent. A create whose reply is lost with
// the connection may have been applied (at least once).
func (s *Simple) Offer(ctx context.Context, data []byte) error {
	if err := s.check(ctx, "offer"); err != nil {
		return err
	}
	// The parents only when missing, so that data the client refuses
	// (ErrDataTooLarge) writes nothing.
	node := framework.JoinPath(s.path, simplePrefix)
	_, err := s.c.Create(ctx, node, nonNil(data), framework.WithMode(framework.PersistentSequential))
	if errors.Is(err, zk.ErrNoNode) {
		_, err = s.c.Create(ctx, node, nonNil(data), framework.WithMode(framework.PersistentSequential), framework.CreatingParentContainers())
	}
	return s.wrap("offer", err)
}

// Poll removes and returns the head of the queue; ok is false when the
// queue is empty. It never waits for an item (ctx bounds its requests).
// Like Curator's, it reads the head and deletes it; when another consumer
// deletes it first, it tries the next. A delete whose reply is lost with
// the connection may have been applied: the item is then gone, delivered
// to nobody (at most once, as Curator's).
func (s *Simple) Poll(ctx context.Context) (data []byte, ok bool, err error) {
	if err := s.check(ctx, "poll"); err != nil {
		return nil, false, err
	}
	names, err := s.list(ctx)
	if err != nil {
		return nil, false, s.wrap("poll", err)
	}
	data, ok, _, err = s.takeFirst(ctx, names)
	return data, ok, s.wrap("poll", err)
}

// Peek returns the head of the queue without removing it; ok is false when
// the queue is empty. It never waits for an item (ctx bounds its requests).
func (s *Simple) Peek(ctx context.Context) (data []byte, ok bool, err error) {
	if err := s.check(ctx, "peek"); err != nil {
		return nil, false, err
	}
	names, err := s.list(ctx)
	if err != nil {
		return nil, false, s.wrap("peek", err)
	}
	for _, n := range names {
		data, _, err := s.c.Get(ctx, framework.JoinPath(s.path, n))
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, false, s.wrap("peek", err)
		}
		return data, true, nil
	}
	return nil, false, nil
}

// Take removes and returns the head of the queue, waiting for an item
// until ctx ends (its error). Unlike Curator's take, where every waiter
// sets its own watch and all of them wake and race for each new item,
// the Takes of one Simple wait in line: only the first watches the queue
// and reads it when it changes, and the next one starts looking only when
// it has its item, so one item wakes one waiter (per Simple: share one
// handle between goroutines). A Take lists the queue only when the names
// of the last listing are used up, not once an item, and takers that run
// into each other spread out (a taker alone takes in order). When Take
// returns it has left no watch on the server.
func (s *Simple) Take(ctx context.Context) ([]byte, error) {
	if err := s.check(ctx, "take"); err != nil {
		return nil, err
	}
	select {
	case s.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, s.wrap("take", ctx.Err())
	}
	defer func() { <-s.turn }()
	data, err := s.take(ctx)
	return data, s.wrap("take", err)
}

func (s *Simple) take(ctx context.Context) ([]byte, error) {
	watchFirst := false // the queue's node was just made: watch as we list
	for {
		// The names left by the last listing first: a Take lists the
		// queue only when they are used up, not once an item.
		s.mu.Lock()
		names := s.next
		s.next = nil
		s.mu.Unlock()
		if len(names) == 0 && !watchFirst {
			var err error
			if names, err = s.list(ctx); err != nil {
				return nil, err
			}
		}
		if len(names) > 0 {
			data, ok, err := s.takeFrom(ctx, names)
			if err != nil || ok {
				return data, err
			}
			continue // all taken by others: list again
		}
		// Empty: list again with a watch, and wait unless it filled
		// meanwhile.
		watchFirst = false
		children, _, ev, err := s.c.ChildrenW(ctx, s.path)
		kind := framework.ChildWatch
		if errors.Is(err, zk.ErrNoNode) {
			var st *zk.Stat
			st, ev, err = s.c.ExistsW(ctx, s.path)
			kind = framework.ExistWatch
			if err == nil && st != nil {
				s.unwatch(ctx, kind)
				continue // made meanwhile: list it
			}
		}
		if err != nil {
			return nil, err
		}
		if names := sortSimple(children); len(names) > 0 {
			data, ok, err := s.takeFrom(ctx, names)
			s.unwatch(ctx, kind)
			if err != nil || ok {
				return data, err
			}
			continue
		}
		s.waiting.Add(1)
		select {
		case <-ev:
			s.waiting.Add(-1)
			// Woken by the queue node's creation, its items come next:
			// list them with the watch.
			watchFirst = kind == framework.ExistWatch
		case <-ctx.Done():
			s.waiting.Add(-1)
			s.unwatch(ctx, kind)
			return nil, ctx.Err()
		}
	}
}

// takeFrom takes the first item of names it can and keeps the names it
// did not try for the next Take.
func (s *Simple) takeFrom(ctx context.Context, names []string) ([]byte, bool, error) {
	data, ok, rest, err := s.takeFirst(ctx, names)
	s.mu.Lock()
	s.next = rest
	s.mu.Unlock()
	return data, ok, err
}

// unwatch gives back the watch of a Take that stops waiting.
func (s *Simple) unwatch(ctx context.Context, kind framework.WatchKind) {
	cctx, cancel := s.c.CleanupContext(ctx)
	defer cancel()
	_ = s.c.Unwatch(cctx, s.path, kind)
}

func (s *Simple) list(ctx context.Context) ([]string, error) {
	children, _, err := s.c.Children(ctx, s.path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return sortSimple(children), nil
}

// takeFirst reads and deletes the first of names still there, and
// returns the names it did not try. A taker alone goes in order; takers
// that run into each other (an item gone, or deleted by another after it
// was read) spread out, as Consume's consumers do (see pass): the first
// try is a random one of the first spread names, and a collision hops a
// random number of names ahead, those passed over tried last.
func (s *Simple) takeFirst(ctx context.Context, names []string) ([]byte, bool, []string, error) {
	s.mu.Lock()
	sp := s.spread
	s.mu.Unlock()
	order := sp.start(names)
	collisions := 0
	defer func() {
		s.mu.Lock()
		s.spread = sp.next(collisions)
		s.mu.Unlock()
	}()
	for i := 0; i < len(order); i++ {
		p := framework.JoinPath(s.path, order[i])
		data, st, err := s.c.Get(ctx, p)
		ours := false
		if err == nil {
			ours, err = removeItem(ctx, s.c, p, st.Version)
		} else if errors.Is(err, zk.ErrNoNode) {
			err = nil
		}
		if err != nil {
			return nil, false, order[i:], err
		}
		if ours {
			return data, true, order[i+1:], nil
		}
		// Another taker had it first: it is theirs.
		collisions++
		order = sp.hop(order, i)
	}
	return nil, false, nil, nil
}

// sortSimple returns the "qn-" nodes in sequence order; foreign children
// are left out.
func sortSimple(children []string) []string {
	return locking.SortChildren(children, func(n string) (int32, bool) {
		if !strings.HasPrefix(n, simplePrefix) {
			return 0, false
		}
		return locking.Sequence(n, simplePrefix)
	})
}
