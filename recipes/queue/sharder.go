package queue

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/fanout"
	"github.com/gocurator/curator/recipes/leader"
)

// Sharder is a queue spread over several Queues, its shards, in Curator's
// QueueSharder layout: every child of the sharder's path is a shard, a
// Queue of its own. Producers Put through the sharder (or a Queue it
// picks), consumers Consume every shard. One sharder among those started
// on the path, the leader of an election at the leader path, adds a shard
// when one grows past a threshold (WithNewQueueThreshold), up to a
// maximum (WithMaxQueues). Items keep their order within a shard, not
// across shards. Go and Java sharders on one path share its shards.
//
// Start it before use and Close it after; it is safe for concurrent use.
type Sharder struct {
	c          *framework.Client
	path       string
	leaderPath string
	opts       sharderOptions
	log        *zap.Logger
	bad        error

	mu        sync.Mutex
	state     sharderState
	shards    map[string]*Queue // by shard path
	preferred map[string]bool   // shards not past the threshold: Put picks among them first
	changed   fanout.Signal     // notified when a shard is added, closed at Close
	latch     *leader.Latch
	cancel    context.CancelFunc // ends the monitor
	done      chan struct{}      // closed when the monitor has returned

	onCheck   func() // tests: a threshold check has ended
	beforeAdd func() // tests: the leader is about to add a shard
}

type sharderState int

const (
	latent sharderState = iota
	started
	closed
)

// SharderOption configures a Sharder.
type SharderOption func(*sharderOptions)

type sharderOptions struct {
	// threshold is the number of items in a shard past which the leader
	// adds a shard: 10000 (Curator's newQueueThreshold).
	threshold int
	// check is the period of the threshold check: 30s (Curator's
	// thresholdCheckMs).
	check time.Duration
	// maxQueues is the most shards the leader makes: 10 (Curator's
	// maxQueues).
	maxQueues int
	// shard returns the options of a shard's Queue: none (Curator's
	// QueueAllocator).
	shard func(shardPath string) []Option
	// invalid is the first bad option, reported by every call.
	invalid error
	// clock times the threshold checks: the system's (tests inject theirs).
	clock clock
}

func defaultSharderOptions() sharderOptions {
	return sharderOptions{threshold: 10000, check: 30 * time.Second, maxQueues: 10, clock: systemClock{}}
}

func (o *sharderOptions) refuse(format string, args ...any) {
	if o.invalid == nil {
		o.invalid = fmt.Errorf("%w: "+format, append([]any{ErrInvalidOption}, args...)...)
	}
}

// WithNewQueueThreshold sets the number of items (children) in one shard
// that makes the leader add a shard at its next check (Curator's
// newQueueThreshold); n > 0, default 10000. A shard with at most n/2 items
// is preferred again by Put.
func WithNewQueueThreshold(n int) SharderOption {
	return func(o *sharderOptions) {
		if n <= 0 {
			o.refuse("new queue threshold %d, want > 0", n)
		}
		o.threshold = n
	}
}

// WithThresholdCheck sets how often every sharder lists the shards and
// counts their items (Curator's thresholdCheckMs); d > 0, default 30s.
// New shards are found sooner, as they are made: a sharder watches its path.
func WithThresholdCheck(d time.Duration) SharderOption {
	return func(o *sharderOptions) {
		if d <= 0 {
			o.refuse("threshold check %v, want > 0", d)
		}
		o.check = d
	}
}

// WithMaxQueues sets the most shards the leader makes (Curator's
// maxQueues); n > 0, default 10. Past it the leader logs a warning instead.
func WithMaxQueues(n int) SharderOption {
	return func(o *sharderOptions) {
		if n <= 0 {
			o.refuse("max queues %d, want > 0", n)
		}
		o.maxQueues = n
	}
}

// WithShardOptions sets fn to give the options of each shard's Queue, from
// its path (Curator's QueueAllocator). A lock path must differ per shard
// (item names repeat across shards): derive it from shardPath, outside the
// sharder's path, whose every child is a shard, as in
// WithLockPath("/jobs-locks/" + path.Base(shardPath)).
func WithShardOptions(fn func(shardPath string) []Option) SharderOption {
	return func(o *sharderOptions) {
		if fn == nil {
			o.refuse("nil shard options function")
		}
		o.shard = fn
	}
}

// NewSharder returns a sharder of the queues under path, whose leader is
// elected at leaderPath (Curator's LeaderLatch layout; it must be outside
// path). It does no I/O; Start does. Bad input (nil client, invalid paths
// or options) is reported by every call, matching ErrNilClient,
// ErrInvalidPath or ErrInvalidOption.
func NewSharder(c *framework.Client, path, leaderPath string, opts ...SharderOption) *Sharder {
	s := &Sharder{c: c, path: path, leaderPath: leaderPath, opts: defaultSharderOptions(),
		shards: map[string]*Queue{}, preferred: map[string]bool{}, done: make(chan struct{})}
	for _, o := range opts {
		if o == nil {
			s.opts.refuse("nil option")
			continue
		}
		o(&s.opts)
	}
	s.log = zap.NewNop()
	switch {
	case c == nil:
		s.bad = ErrNilClient
	default:
		s.log = c.Logger().Named("queue-sharder").With(zap.String("path", path))
		s.bad = s.validate()
	}
	return s
}

func (s *Sharder) validate() error {
	if err := validatePath(s.path); err != nil {
		return err
	}
	if err := validatePath(s.leaderPath); err != nil {
		return fmt.Errorf("leader path %q: %w", s.leaderPath, err)
	}
	if s.leaderPath == s.path || strings.HasPrefix(s.leaderPath, s.path+"/") {
		// Every child of the path is a shard, the election's too.
		return fmt.Errorf("%w: leader path %q must be outside the queue path", ErrInvalidPath, s.leaderPath)
	}
	return s.opts.invalid
}

// Path returns the sharder's path, the parent of its shards.
func (s *Sharder) Path() string {
	if s == nil {
		return ""
	}
	return s.path
}

func (s *Sharder) wrap(verb string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("queue sharder %s: %s: %w", s.path, verb, err)
}

// check refuses a call on a nil or bad handle or with a nil ctx, and one
// made in a state other than want.
func (s *Sharder) check(ctx context.Context, verb string, want sharderState) error {
	if s == nil {
		return fmt.Errorf("queue sharder: %s: %w", verb, ErrNilHandle)
	}
	if err := checkCtx(ctx); err != nil {
		return s.wrap(verb, err)
	}
	if s.bad != nil {
		return s.wrap(verb, s.bad)
	}
	s.mu.Lock()
	st := s.state
	s.mu.Unlock()
	switch {
	case st == closed:
		return s.wrap(verb, ErrClosed)
	case st == want:
		return nil
	case st == latent:
		return s.wrap(verb, ErrNotStarted)
	}
	return s.wrap(verb, fmt.Errorf("%w: started twice", ErrInvalidOption))
}

// Start makes the sharder's path (a container, as Curator's does), takes
// every child as a shard, makes the first shard when there is none, and
// starts the sharder's candidacy at the leader path and its threshold
// checks, in the background until Close. It fails with ctx's error or a
// ZooKeeper error, leaving the sharder unstarted (a shard it made stays);
// a second Start fails with ErrInvalidOption.
func (s *Sharder) Start(ctx context.Context) error {
	if err := s.check(ctx, "start", latent); err != nil {
		return err
	}
	if err := s.first(ctx); err != nil {
		return s.wrap("start", err)
	}
	w, err := s.c.Watch(ctx, s.path)
	if err != nil {
		return s.wrap("start", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != latent { // a Start or Close meanwhile
		w.Close()
		if s.state == closed {
			return s.wrap("start", ErrClosed)
		}
		return s.wrap("start", fmt.Errorf("%w: started twice", ErrInvalidOption))
	}
	s.state = started
	s.latch = leader.New(s.c, s.leaderPath).Start(leader.Listener{})
	mctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go s.monitor(mctx, w)
	return nil
}

// first makes the sharder's path, lists the shards, and makes one when
// there is none. The first shard is made in a transaction with a
// versioned write of the path's own data (unchanged), so that of several
// sharders starting on an empty path one makes it (Curator's each make
// one). The path, a container, may be reaped by the server until it has a
// shard: then it is made again.
func (s *Sharder) first(ctx context.Context) error {
	for {
		if _, err := s.c.Create(ctx, s.path, nil, framework.WithMode(framework.Container), framework.CreatingParentContainers()); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
		data, st, err := s.c.Get(ctx, s.path)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return err
		}
		names, _, err := s.c.Children(ctx, s.path)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return err
		}
		if len(names) > 0 {
			s.add(names)
			return nil
		}
		_, err = s.c.Multi(ctx,
			framework.SetOp(s.path, data, st.Version),
			framework.CreateOp(s.newShardPath(), nil, framework.Persistent))
		// BadVersion: another made it (or our own lost reply's first
		// try did); NoNode: the path was reaped. Look again.
		if err != nil && !errors.Is(err, zk.ErrBadVersion) && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
}

// newShardPath names a new shard as Curator does: "queue-<random UUID>".
func (s *Sharder) newShardPath() string {
	return framework.JoinPath(s.path, itemPrefix+uuid.NewString())
}

// add takes the children names as shards; new ones are preferred.
func (s *Sharder) add(names []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == closed {
		return
	}
	added := false
	for _, n := range names {
		p := framework.JoinPath(s.path, n)
		if s.shards[p] != nil {
			continue
		}
		var opts []Option
		if s.opts.shard != nil {
			opts = s.opts.shard(p)
		}
		s.shards[p] = New(s.c, p, opts...)
		s.preferred[p] = true
		added = true
	}
	if added {
		s.changed.Notify()
	}
}

// monitor runs the threshold checks, and reads the shards again whenever
// the path's children change, until ctx ends or the client closes.
func (s *Sharder) monitor(ctx context.Context, w *framework.Watcher) {
	defer close(s.done)
	defer w.Close()
	events := w.Events()
	tick, stop := s.opts.clock.After(s.opts.check)
	defer func() { stop() }()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.c.Done():
			return
		case _, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if names, _, err := s.c.Children(ctx, s.path); err == nil {
				s.add(names)
			}
		case <-tick:
			s.checkThreshold(ctx)
			tick, stop = s.opts.clock.After(s.opts.check)
		}
	}
}

// checkThreshold is Curator's check: it lists the shards, counts each
// one's items, prefers those at or under half the threshold and avoids
// those at or past it; when one is past it and this sharder leads, it adds
// a shard unless there are as many as WithMaxQueues. The new shard is made
// behind the leader's fence, so a deposed leader makes none.
func (s *Sharder) checkThreshold(ctx context.Context) {
	defer func() {
		if s.onCheck != nil {
			s.onCheck()
		}
	}()
	names, _, err := s.c.Children(ctx, s.path)
	if err != nil {
		s.log.Warn("checking the shards against the threshold", zap.Error(err))
		return
	}
	s.add(names)
	over, size := false, 0
	for _, n := range names {
		p := framework.JoinPath(s.path, n)
		st, err := s.c.Exists(ctx, p)
		if err != nil || st == nil {
			continue
		}
		n := int(st.NumChildren)
		s.mu.Lock()
		switch {
		case n >= s.opts.threshold:
			over, size = true, n
			delete(s.preferred, p)
		case n <= s.opts.threshold/2:
			s.preferred[p] = true
		}
		s.mu.Unlock()
	}
	t := s.latch.Term()
	if !over || t == nil || t.Err() != nil {
		return
	}
	if len(names) >= s.opts.maxQueues {
		s.log.Warn("max number of shards reached; consider increasing it (WithMaxQueues)", zap.Int("max", s.opts.maxQueues))
		return
	}
	s.log.Info("adding a shard: one passed the threshold", zap.Int("size", size), zap.Int("threshold", s.opts.threshold))
	if s.beforeAdd != nil {
		s.beforeAdd()
	}
	p := s.newShardPath()
	if _, err := t.FencedMulti(ctx, framework.CreateOp(p, nil, framework.Persistent)); err != nil {
		s.log.Warn("adding a shard", zap.Error(err))
		return
	}
	s.add([]string{p[len(s.path)+1:]})
}

// Queue returns one of the shards, at random among those not past half
// the threshold at the last check when there are some (Curator's
// getQueue): put into it, do not Close it (Close of the Sharder does). It
// fails with ErrNotStarted before Start, ErrClosed after Close.
func (s *Sharder) Queue() (*Queue, error) {
	if err := s.check(context.Background(), "queue", started); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pick := s.preferredPaths()
	if len(pick) == 0 {
		pick = s.pathsLocked()
	}
	return s.shards[pick[rand.IntN(len(pick))]], nil
}

func (s *Sharder) preferredPaths() []string {
	var out []string
	for p := range s.preferred {
		out = append(out, p)
	}
	return out
}

// Put adds item to a shard Queue picks, as Queue.Put.
func (s *Sharder) Put(ctx context.Context, item []byte) error {
	q, err := s.pick(ctx, "put")
	if err != nil {
		return err
	}
	return q.Put(ctx, item)
}

// PutMulti adds items as one node to a shard Queue picks, as
// Queue.PutMulti.
func (s *Sharder) PutMulti(ctx context.Context, items [][]byte) error {
	q, err := s.pick(ctx, "put multi")
	if err != nil {
		return err
	}
	return q.PutMulti(ctx, items)
}

// pick is Queue for a call that has a ctx.
func (s *Sharder) pick(ctx context.Context, verb string) (*Queue, error) {
	if err := s.check(ctx, verb, started); err != nil {
		return nil, err
	}
	return s.Queue()
}

// ShardCount returns the number of shards the sharder knows (Curator's
// getShardQty); 0 before Start.
func (s *Sharder) ShardCount() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.shards)
}

// ShardPaths returns the paths of the shards the sharder knows, sorted
// (Curator's getQueuePaths).
func (s *Sharder) ShardPaths() []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pathsLocked()
}

func (s *Sharder) pathsLocked() []string {
	out := make([]string, 0, len(s.shards))
	for p := range s.shards {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Consume consumes every shard, those added later too (as soon as the
// sharder sees them), until ctx ends (ctx's error) or the Sharder or its
// client is closed (ErrClosed), or a shard's consumer fails for good (its
// error). Each shard is consumed as Queue.Consume consumes it, with its
// guarantees: fn is called for one item of a shard at a time, but for
// items of different shards concurrently. It fails with ErrNotStarted
// before Start.
func (s *Sharder) Consume(ctx context.Context, fn func(ctx context.Context, it Item) error) error {
	if err := s.check(ctx, "consume", started); err != nil {
		return err
	}
	if fn == nil {
		return s.wrap("consume", fmt.Errorf("%w: nil consume function", ErrInvalidOption))
	}
	g, gctx := errgroup.WithContext(ctx)
	err := s.consumeShards(gctx, g, fn)
	if gerr := g.Wait(); gerr != nil && (err == nil || errors.Is(err, context.Canceled)) {
		err = gerr
	}
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	return s.wrap("consume", err)
}

// consumeShards starts a consumer on each shard as it comes, until ctx
// ends or the sharder closes.
func (s *Sharder) consumeShards(ctx context.Context, g *errgroup.Group, fn func(ctx context.Context, it Item) error) error {
	consumed := map[string]bool{}
	for {
		s.mu.Lock()
		st, ch := s.state, s.changed.C()
		var fresh []*Queue
		for p, q := range s.shards {
			if !consumed[p] {
				consumed[p] = true
				fresh = append(fresh, q)
			}
		}
		s.mu.Unlock()
		if st == closed {
			return ErrClosed
		}
		for _, q := range fresh {
			g.Go(func() error { return q.Consume(ctx, fn) })
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-s.c.Done():
			return ErrClosed
		}
	}
}

// Close stops the threshold checks, ends the sharder's candidacy (its
// latch node is deleted), closes every shard's Queue (their consumers end
// with ErrClosed, background puts are flushed within ctx) and waits, within
// ctx, until the shards' consumers have returned (a Consume returns
// ErrClosed once they have). It deletes no shard. Later calls
// fail with ErrClosed; Close is idempotent, and closes an unstarted
// sharder for good.
func (s *Sharder) Close(ctx context.Context) error {
	if s == nil {
		return fmt.Errorf("queue sharder: close: %w", ErrNilHandle)
	}
	if err := checkCtx(ctx); err != nil {
		return s.wrap("close", err)
	}
	s.mu.Lock()
	if s.state != closed {
		s.state = closed
		s.changed.Close()
	}
	latch, cancel := s.latch, s.cancel
	shards := make([]*Queue, 0, len(s.shards))
	for _, q := range s.shards {
		shards = append(shards, q)
	}
	s.mu.Unlock()
	var errs []error
	if cancel != nil {
		cancel()
		if err := latch.Close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	for _, q := range shards {
		if err := q.Close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if cancel != nil {
		select {
		case <-s.done:
		case <-ctx.Done():
			errs = append(errs, ctx.Err())
		}
	}
	return s.wrap("close", errors.Join(errs...))
}
