package queue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/framework"
)

// itemPrefix is the name of DistributedQueue's item nodes, before the
// server's sequence number (Curator's QUEUE_ITEM_NAME).
const itemPrefix = "queue-"

// Queue is a distributed queue in Curator's DistributedQueue layout:
// producers Put items, consumers Consume them. It is safe for concurrent
// use: any number of goroutines may Put, and any number may Consume (each
// call is one consumer; consumers of one Queue do not compete for the same
// item, consumers of different handles and processes, Java ones included,
// share the queue as Curator's do).
type Queue struct {
	c    *framework.Client
	path string
	opts options
	log  *zap.Logger
	bad  error   // why every call fails; nil when the handle is usable
	v    variant // how item nodes are named and ordered

	mu      sync.Mutex
	claimed map[string]bool // items a consumer of this handle is on
	active  int             // Consume calls running
	closed  bool
	closeCh chan struct{} // closed by Close
	idle    chan struct{} // closed when active reaches 0 after Close
	ensured bool          // the queue (and lock) paths were made

	puts *putter // the background puts (PutAsync)

	onPass func(name string)     // tests: an item passed by as another's
	onWait func(d time.Duration) // tests: a delay consumer sleeps d
}

// New returns a handle on the queue at path. It does no I/O: the paths are
// made by the first Put or Consume. Bad input (nil client, invalid path or
// option) is reported by every call, matching ErrNilClient,
// ErrInvalidPath or ErrInvalidOption.
func New(c *framework.Client, path string, opts ...Option) *Queue {
	q := &Queue{c: c, path: path, opts: defaultOptions(), claimed: map[string]bool{}, closeCh: make(chan struct{})}
	q.puts = newPutter(q)
	for _, o := range opts {
		if o == nil {
			q.opts.invalid = fmt.Errorf("%w: nil option", ErrInvalidOption)
			continue
		}
		o(&q.opts)
	}
	switch {
	case c == nil:
		q.bad = ErrNilClient
		q.log = zap.NewNop()
	default:
		q.log = c.Logger().Named("queue").With(zap.String("path", path))
		if err := validatePath(path); err != nil {
			q.bad = err
		} else if q.opts.invalid != nil {
			q.bad = q.opts.invalid
		}
	}
	return q
}

// Path returns the queue's path.
func (q *Queue) Path() string {
	if q == nil {
		return ""
	}
	return q.path
}

func (q *Queue) check(ctx context.Context, verb string) error {
	if q == nil {
		return fmt.Errorf("queue: %s: %w", verb, ErrNilHandle)
	}
	if err := q.wrap(verb, checkCtx(ctx)); err != nil {
		return err
	}
	if q.bad != nil {
		return q.wrap(verb, q.bad)
	}
	q.mu.Lock()
	closed := q.closed
	q.mu.Unlock()
	if closed {
		return q.wrap(verb, ErrClosed)
	}
	return nil
}

func (q *Queue) wrap(verb string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("queue %s: %s: %w", q.path, verb, err)
}

// Put adds one item at the tail of the queue: one PERSISTENT_SEQUENTIAL
// node "queue-<seq>" holding Curator's item framing, so Java consumers read
// it. It returns once the node exists. An item larger than the servers'
// jute.maxbuffer (framework.WithJuteMaxBuffer) is refused with
// ErrDataTooLarge before anything is written. Like Curator's put, a create
// whose reply is lost with the connection may have been applied: after such
// a failure the item may be in the queue (at least once).
func (q *Queue) Put(ctx context.Context, item []byte) error {
	if err := q.check(ctx, "put"); err != nil {
		return err
	}
	items := [][]byte{item}
	created, err := q.createNode(ctx, itemPrefix, encodeItems(items))
	return q.putDone("put", items, created, err)
}

// PutMulti adds items as one node (Curator's putMulti): consumers get them
// in order, one call of the consume function each. The node as a whole must
// fit in jute.maxbuffer (ErrDataTooLarge otherwise, nothing written); an
// empty items is refused with ErrInvalidOption.
func (q *Queue) PutMulti(ctx context.Context, items [][]byte) error {
	if err := q.check(ctx, "put multi"); err != nil {
		return err
	}
	if len(items) == 0 {
		return q.wrap("put multi", fmt.Errorf("%w: no items", ErrInvalidOption))
	}
	created, err := q.createNode(ctx, itemPrefix, encodeItems(items))
	return q.putDone("put multi", items, created, err)
}

// create makes one item node named name (before the sequence), and the
// queue's path first when it is missing; so an item the client refuses
// (ErrDataTooLarge) writes nothing.
func (q *Queue) create(ctx context.Context, name string, data []byte) error {
	_, err := q.createNode(ctx, name, data)
	return err
}

// createNode is create, returning the node's path.
func (q *Queue) createNode(ctx context.Context, name string, data []byte) (string, error) {
	p, err := q.c.Create(ctx, framework.JoinPath(q.path, name), data, framework.WithMode(framework.PersistentSequential))
	if errors.Is(err, zk.ErrNoNode) {
		q.setEnsured(false)
		if err = q.ensure(ctx); err == nil {
			p, err = q.c.Create(ctx, framework.JoinPath(q.path, name), data, framework.WithMode(framework.PersistentSequential))
		}
	}
	return p, err
}

func (q *Queue) setEnsured(v bool) {
	q.mu.Lock()
	q.ensured = v
	q.mu.Unlock()
}

// ensure makes the queue's path (and the lock path) as Curator's start
// does: PERSISTENT nodes with the client's default data, missing parents
// as containers. Once per handle, again after the node was found missing.
func (q *Queue) ensure(ctx context.Context) error {
	q.mu.Lock()
	done := q.ensured
	q.mu.Unlock()
	if done {
		return nil
	}
	for _, p := range []string{q.path, q.opts.lockPath} {
		if p == "" {
			continue
		}
		if _, err := q.c.Create(ctx, p, nil, framework.CreatingParentContainers()); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	q.setEnsured(true)
	return nil
}

// Close ends every Consume of the handle (they return ErrClosed; an item
// being consumed has its context cancelled and is left to be delivered
// again: with a lock path its lock is deleted, without one what the
// function did not consume is put back at the tail) and waits until they
// have returned, or until ctx ends (its error). It writes the background
// puts that wait (PutAsync) first, within ctx: those still waiting when
// ctx ends fail with ErrClosed, told to the put listener and to Flush,
// never dropped unsaid. Later calls fail with ErrClosed. It deletes
// nothing: items stay in the queue. Close is idempotent.
func (q *Queue) Close(ctx context.Context) error {
	if q == nil {
		return fmt.Errorf("queue: close: %w", ErrNilHandle)
	}
	if err := checkCtx(ctx); err != nil {
		return q.wrap("close", err)
	}
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		close(q.closeCh)
		q.idle = make(chan struct{})
		if q.active == 0 {
			close(q.idle)
		}
	}
	idle := q.idle
	q.mu.Unlock()
	if err := q.puts.close(ctx); err != nil {
		return q.wrap("close", err)
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return q.wrap("close", ctx.Err())
	}
}

// enter registers a Consume call; false once the handle is closed.
func (q *Queue) enter() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	q.active++
	return true
}

func (q *Queue) leave() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.active--
	if q.active == 0 && q.closed {
		close(q.idle)
	}
}

// claim marks name as being consumed by a consumer of this handle, so that
// the handle's other consumers pass it by; false if one is on it.
func (q *Queue) claim(name string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.claimed[name] {
		return false
	}
	q.claimed[name] = true
	return true
}

func (q *Queue) unclaim(name string) {
	q.mu.Lock()
	delete(q.claimed, name)
	q.mu.Unlock()
}
