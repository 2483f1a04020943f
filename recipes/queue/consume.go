package queue

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locking"
	"github.com/gocurator/curator/retry"
)

// Pauses after a ZooKeeper error the consumer retries on its own.
const (
	minPause = 100 * time.Millisecond
	maxPause = 5 * time.Second
)

// Consume runs a consumer until ctx ends (ctx's error) or the Queue or its
// client is closed (ErrClosed): it takes the queue's items in sequence
// order and calls fn with each, one at a time; several Consume calls
// consume in parallel. An item is removed once fn returns nil for it; when
// fn returns an error, the error mode decides (WithErrorMode: Requeue by
// default). What each mode guarantees:
//
//   - with a lock path (WithLockPath), at least once: the item is locked
//     by an EPHEMERAL node while fn runs and removed after; if the consumer
//     dies, its lock node goes with its session and another consumer takes
//     the item at once. fn's ctx ends (Item.Done) when the lock may be
//     lost; Item.CheckOp and Item.RemoveOps fence fn's own writes.
//   - without, at most once (Curator's): the item is deleted before fn
//     runs, so a consumer that dies in fn loses it; an error from fn
//     requeues it (or drops it, with Delete).
//
// Consume survives disconnects and session expiry (CURATOR-623): it takes
// no item while the client is Suspended or Lost, and reads the queue again
// once connected. Errors it handles without returning (fn's errors, corrupt
// items, ZooKeeper errors it retries after a pause) go to WithErrorHandler.
// When it returns, it has left no lock node, watch or goroutine behind
// (a lock node it could not delete goes with its session).
func (q *Queue) Consume(ctx context.Context, fn func(ctx context.Context, it Item) error) error {
	if err := q.check(ctx, "consume"); err != nil {
		return err
	}
	if fn == nil {
		return q.wrap("consume", fmt.Errorf("%w: nil consume function", ErrInvalidOption))
	}
	if !q.enter() {
		return q.wrap("consume", ErrClosed)
	}
	defer q.leave()
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-q.closeCh:
			cancel(ErrClosed)
		case <-q.c.Done():
			cancel(ErrClosed)
		case <-cctx.Done():
		}
	}()
	if q.opts.onState != nil {
		defer q.c.Listen(q.opts.onState)()
	}
	k := &consumer{q: q, fn: fn, skip: map[string]bool{}, others: map[string]bool{}}
	err := k.run(cctx)
	if cctx.Err() != nil {
		err = context.Cause(cctx)
	}
	return q.wrap("consume", err)
}

// consumer is one Consume call's state; only its goroutine touches it.
type consumer struct {
	q      *Queue
	fn     func(ctx context.Context, it Item) error
	skip   map[string]bool // corrupt items left in the queue
	others map[string]bool // items skipped as locked by another consumer
	pause  time.Duration
	again  bool      // look at the queue again at once
	spread spread    // how far apart from other consumers to start (pass)
	next   time.Time // a delay queue's earliest item not yet due; zero if none

	overBuffer bool // the last listing was larger than jute.maxbuffer
}

func (k *consumer) c() *framework.Client { return k.q.c }

// report hands an error the consumer handles to the error handler.
func (k *consumer) report(err error) {
	k.q.log.Debug("queue consumer", zap.Error(err))
	if k.q.opts.onError != nil {
		k.q.opts.onError(err)
	}
}

// retryPause reports err and waits before the next try, longer each time.
func (k *consumer) retryPause(ctx context.Context, err error) error {
	k.report(err)
	k.pause = min(max(2*k.pause, minPause), maxPause)
	return k.c().Pause(ctx, k.pause)
}

// run is Consume's loop: make the paths, watch the queue (and the locks),
// then list, take what can be taken, and wait for a reason to look again.
func (k *consumer) run(ctx context.Context) error {
	for {
		err := k.q.ensure(ctx)
		if err == nil {
			break
		}
		if ctx.Err() != nil || !retry.IsRetryable(err) {
			return err // closed, no permission, bad input: trying again will not help
		}
		if err := k.retryPause(ctx, err); err != nil {
			return err
		}
	}
	w, err := k.c().Watch(ctx, k.q.path)
	if err != nil {
		return err
	}
	defer w.Close()
	var locks *framework.Watcher
	if k.q.opts.lockPath != "" {
		// A recursive watch names each lock node that goes, so an item
		// whose consumer died is taken as soon as its lock is deleted,
		// not at the next put (Curator waits for the queue to change).
		if locks, err = k.c().Watch(ctx, k.q.opts.lockPath, framework.Recursive()); err != nil {
			return err
		}
		defer locks.Close()
	}
	for {
		if err := k.connected(ctx); err != nil {
			return err
		}
		k.again = false
		names, err := k.list(ctx)
		if err != nil {
			if ctx.Err() != nil || (!retry.IsRetryable(err) && !errors.Is(err, zk.ErrNoNode)) {
				return err
			}
			if errors.Is(err, zk.ErrNoNode) {
				k.q.setEnsured(false)
				if err := k.q.ensure(ctx); err != nil && ctx.Err() != nil {
					return err
				}
			}
			if err := k.retryPause(ctx, err); err != nil {
				return err
			}
			continue
		}
		k.pause = 0
		k.next = time.Time{}
		clear(k.others)
		if err := k.pass(ctx, names, w); err != nil {
			return err
		}
		if k.again {
			continue
		}
		if err := k.wait(ctx, w, locks); err != nil {
			return err
		}
	}
}

// pass takes the items of one listing. A consumer alone takes them in
// order. Consumers that run into each other (an item read, deleted or
// locked by another meanwhile: each such collision costs a round trip)
// spread out (plain and id queues; see spreads): a pass starts at a
// random one of the first spread items and, after a collision, hops a
// random number of items ahead (those passed over are tried at the end of
// the pass); spread doubles after a pass with collisions and halves after
// one without. The next item's
// read is sent while the current one is taken, so that one round trip
// carries both.
func (k *consumer) pass(ctx context.Context, names []string, w *framework.Watcher) error {
	order := k.spread.start(names)
	var pre *fetched
	defer func() { pre.wait() }()
	collisions := 0
	for i := 0; i < len(order); i++ {
		name := order[i]
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if s := k.c().State(); s == connstate.Suspended || s == connstate.Lost {
			k.again = true
			break
		}
		if k.notDue(name) {
			break // the rest, in time order, are later still
		}
		cur := pre
		pre = nil
		if i+1 < len(order) && k.prefetchable(order[i+1]) {
			pre = k.fetch(ctx, order[i+1])
		}
		if cur != nil && cur.name != name {
			cur.wait()
			cur = nil
		}
		if k.take(ctx, name, cur) == collided && k.spreads() {
			collisions++
			order = k.spread.hop(order, i)
		}
		if k.q.v == priorityQueue && k.changed(w) {
			// A new item may come before the rest: look again
			// (Curator's minItemsBeforeRefresh, at every item).
			k.again = true
			break
		}
	}
	k.spread = k.spread.next(collisions)
	return nil
}

// spreads reports whether the queue's consumers may spread out: a plain
// or id queue's. A priority or delay queue's are kept in their order
// (priority, time), which spreading would break.
func (k *consumer) spreads() bool { return k.q.v == plainQueue || k.q.v == idQueue }

// prefetchable reports whether name's read may be sent ahead: not an item
// left aside as corrupt, nor a delay queue's item not due yet.
func (k *consumer) prefetchable(name string) bool {
	if k.skip[name] {
		return false
	}
	if k.q.v == delayQueue {
		if at, ok := itemDue(name); ok && k.q.opts.clock.Now().Before(at) {
			return false
		}
	}
	return true
}

// fetched is an item node's read sent ahead of its take.
type fetched struct {
	name string
	done chan struct{}
	data []byte
	st   *zk.Stat
	err  error
}

// fetch sends the read of item name in the background.
func (k *consumer) fetch(ctx context.Context, name string) *fetched {
	f := &fetched{name: name, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		f.data, f.st, f.err = k.c().Get(ctx, framework.JoinPath(k.q.path, name))
	}()
	return f
}

// wait waits for the read (nil: none was sent).
func (f *fetched) wait() {
	if f != nil {
		<-f.done
	}
}

// connected waits while the client is Suspended or Lost: a consumer that
// cannot reach the servers takes no new item (CURATOR-336).
func (k *consumer) connected(ctx context.Context) error {
	for {
		changed := k.c().StateChanged()
		if s := k.c().State(); s != connstate.Suspended && s != connstate.Lost {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// list returns the queue's item nodes in sequence order, wrap-aware;
// foreign children are left out (Curator logs and skips them too).
func (k *consumer) list(ctx context.Context) ([]string, error) {
	children, _, err := k.c().Children(ctx, k.q.path)
	if err != nil {
		return nil, err
	}
	live := make(map[string]bool, len(children))
	for _, n := range children {
		live[n] = true
	}
	for n := range k.skip {
		if !live[n] {
			delete(k.skip, n)
		}
	}
	k.checkBacklog(children)
	return k.q.v.order(children), nil
}

// notDue reports whether a delay queue's item is not due yet, and keeps
// the earliest such time for wait.
func (k *consumer) notDue(name string) bool {
	if k.q.v != delayQueue {
		return false
	}
	at, ok := itemDue(name)
	if !ok || !k.q.opts.clock.Now().Before(at) {
		return false
	}
	if k.next.IsZero() || at.Before(k.next) {
		k.next = at
	}
	return true
}

// changed reports, without waiting, whether the queue's children changed
// since they were listed (it takes the watch's event: the caller lists
// again).
func (k *consumer) changed(w *framework.Watcher) bool {
	for {
		select {
		case ev, ok := <-w.Events():
			if !ok || ev.Type != framework.WatchDataChanged {
				return true
			}
		default:
			return false
		}
	}
}

// checkBacklog reports, once each time it happens, a listing that grew past
// the client's jute.maxbuffer (ErrBacklog).
func (k *consumer) checkBacklog(children []string) {
	size := 0
	for _, n := range children {
		size += 4 + len(n)
	}
	over := size > k.c().JuteMaxBuffer()
	if over && !k.overBuffer {
		k.q.log.Warn("queue listing larger than jute.maxbuffer", zap.Int("children", len(children)), zap.Int("bytes", size))
		k.report(fmt.Errorf("%w: %d children, a %d-byte listing: Curator consumers cannot list the queue; add consumers, shard the queue, or raise jute.maxbuffer",
			ErrBacklog, len(children), size))
	}
	k.overBuffer = over
}

// itemSequence is the sequence number of an item node; false for a
// foreign child.
func itemSequence(name string) (int32, bool) {
	if !strings.HasPrefix(name, itemPrefix) {
		return 0, false
	}
	return locking.Sequence(name, itemPrefix)
}

// wait returns once the queue may hold something to take: a change of its
// children, a lock node gone whose item we passed by, a reconnection.
func (k *consumer) wait(ctx context.Context, w, locks *framework.Watcher) error {
	var lockEvents <-chan framework.WatchEvent
	if locks != nil {
		lockEvents = locks.Events()
	}
	// A delay queue wakes when its earliest item is due, not by polling.
	var due <-chan time.Time
	if !k.next.IsZero() {
		d := k.next.Sub(k.q.opts.clock.Now())
		if k.q.onWait != nil {
			k.q.onWait(d)
		}
		var stop func()
		due, stop = k.q.opts.clock.After(d)
		defer stop()
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-due:
			return nil
		case ev, ok := <-w.Events():
			if !ok {
				return watcherEnded(ctx, w)
			}
			if ev.Type == framework.WatchDataChanged {
				continue // the queue node's own data: nothing to take
			}
			return nil
		case ev, ok := <-lockEvents:
			if !ok {
				return watcherEnded(ctx, locks)
			}
			switch ev.Type {
			case framework.WatchResync:
				return nil
			case framework.WatchDeleted:
				if _, name := framework.SplitPath(ev.Path); k.others[name] {
					return nil
				}
			}
		}
	}
}

func watcherEnded(ctx context.Context, w *framework.Watcher) error {
	if err := w.Err(); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return ErrClosed
}

// outcome is what a take came to.
type outcome int

const (
	passed   outcome = iota // not taken: corrupt, failed, or stopping
	taken                   // delivered (fn ran)
	collided                // another consumer had it first
)

// take tries to consume the item node name (pre: its read, if sent
// ahead); what goes wrong is reported, never returned: the next item is
// tried either way.
func (k *consumer) take(ctx context.Context, name string, pre *fetched) outcome {
	if k.skip[name] {
		return passed
	}
	if !k.q.claim(name) {
		// Another Consume of this handle is on it; if it stops without
		// consuming it, its lock node goes (or the item is put back).
		k.others[name] = true
		return collided
	}
	defer k.q.unclaim(name)
	var (
		data []byte
		st   *zk.Stat
		err  error
	)
	if pre != nil {
		pre.wait()
		data, st, err = pre.data, pre.st, pre.err
	} else {
		data, st, err = k.c().Get(ctx, framework.JoinPath(k.q.path, name))
	}
	if err != nil {
		if errors.Is(err, zk.ErrNoNode) {
			return collided
		}
		if ctx.Err() == nil {
			k.report(fmt.Errorf("item %s: read: %w", name, err))
		}
		return passed
	}
	items, err := decodeItems(data)
	if err != nil {
		k.corrupt(ctx, name, data, st.Version, err)
		return passed
	}
	if k.q.opts.lockPath == "" {
		return k.takeUnlocked(ctx, name, items, st.Version)
	}
	return k.takeLocked(ctx, name, data, items, st.Version)
}

// corrupt parks (WithParkPath) or skips an item node that does not decode.
func (k *consumer) corrupt(ctx context.Context, name string, data []byte, version int32, cause error) {
	err := fmt.Errorf("item %s: %w", name, cause)
	park := k.q.opts.parkPath
	if park == "" {
		k.skip[name] = true
		k.report(fmt.Errorf("%w (left in the queue)", err))
		return
	}
	move := func() error {
		_, err := k.c().Multi(ctx,
			framework.CreateOp(framework.JoinPath(park, name), nonNil(data), framework.Persistent),
			framework.DeleteOp(framework.JoinPath(k.q.path, name), version))
		return err
	}
	perr := move()
	if isOpErr(perr, 0, zk.ErrNoNode) { // the park path is missing
		if _, cerr := k.c().Create(ctx, park, nil, framework.CreatingParentContainers()); cerr == nil || errors.Is(cerr, zk.ErrNodeExists) {
			perr = move()
		}
	}
	switch {
	case perr == nil:
		k.report(fmt.Errorf("%w (parked in %s)", err, park))
	case isOpErr(perr, 1, zk.ErrNoNode), isOpErr(perr, 1, zk.ErrBadVersion):
		// Taken or changed by another consumer meanwhile.
	default:
		k.skip[name] = true
		k.report(fmt.Errorf("%w (could not park it: %w)", err, perr))
	}
}

// takeUnlocked is Curator's mode without a lock path: delete, then
// deliver (at most once); a failed fn requeues what it did not consume.
func (k *consumer) takeUnlocked(ctx context.Context, name string, items [][]byte, version int32) outcome {
	itemPath := framework.JoinPath(k.q.path, name)
	ours, err := removeItem(ctx, k.c(), itemPath, version)
	if err != nil {
		if ctx.Err() == nil {
			k.report(fmt.Errorf("item %s: delete: %w", name, err))
		}
		return passed
	}
	if !ours {
		return collided
	}
	f := &fence{ctx: ctx, itemPath: itemPath, rest: items}
	for i, data := range items {
		err := k.fn(ctx, k.item(Item{Data: data, Name: name, Index: i, Count: len(items), f: f}))
		if err == nil {
			continue
		}
		rest := items[i:]
		if ctx.Err() == nil {
			k.report(fmt.Errorf("item %s[%d]: %w: %w", name, i, ErrConsumer, err))
			if k.q.opts.errorMode == Delete {
				return taken
			}
			rest = requeued(items, i, err)
		}
		if len(rest) == 0 {
			return taken
		}
		// Put back what was not consumed: the consumer failed, or it
		// is stopping and the item was deleted already.
		cctx, cancel := k.c().CleanupContext(ctx)
		defer cancel()
		if _, perr := k.c().Create(cctx, framework.JoinPath(k.q.path, requeueName(name)), encodeItems(rest),
			framework.WithMode(framework.PersistentSequential)); perr != nil {
			k.report(fmt.Errorf("item %s: requeue: %w", name, perr))
		}
		return taken
	}
	return taken
}

// takeLocked is the lock-safety mode: lock, deliver, then remove (or
// requeue), fenced by the item node's version.
func (k *consumer) takeLocked(ctx context.Context, name string, data []byte, items [][]byte, version int32) outcome {
	f, session, res := k.lock(ctx, name, data, version)
	if res != taken {
		return res
	}
	f.rest = items
	ictx, lost := context.WithCancelCause(ctx)
	defer lost(nil)
	f.ctx = ictx
	stop := k.c().Guard(session, func(closed bool, _ connstate.State) {
		if closed {
			lost(ErrClosed)
		} else {
			lost(ErrItemLost)
		}
	})
	defer stop()
	for i, d := range items {
		if ictx.Err() != nil {
			break
		}
		err := k.fn(ictx, k.item(Item{Data: d, Name: name, Index: i, Count: len(items), f: f}))
		if ictx.Err() != nil {
			break // lost or stopping: the item stays, for its next consumer
		}
		if err != nil {
			k.report(fmt.Errorf("item %s[%d]: %w: %w", name, i, ErrConsumer, err))
			k.fail(ctx, f, requeued(items, i, err), session)
			return taken
		}
		if f.asked.Swap(false) && !k.advanced(ctx, f, session) {
			return taken
		}
	}
	if ictx.Err() != nil {
		if errors.Is(context.Cause(ictx), ErrItemLost) {
			k.report(fmt.Errorf("item %s: %w", name, ErrItemLost))
		}
		k.unlock(ctx, f, session)
		return taken
	}
	k.finish(ctx, f, nil, session)
	return taken
}

// lock takes an item's lock: its EPHEMERAL lock node (Curator's layout)
// and, in the same transaction, a rewrite of the item node with its own
// data, whose new version is the fence.
func (k *consumer) lock(ctx context.Context, name string, data []byte, version int32) (*fence, int64, outcome) {
	f := &fence{
		itemPath: framework.JoinPath(k.q.path, name),
		lockNode: framework.JoinPath(k.q.opts.lockPath, name),
		version:  version + 1,
		strong:   true,
	}
	session := k.c().SessionID()
	_, err := k.c().Multi(ctx,
		framework.CreateOp(f.lockNode, nil, framework.Ephemeral),
		framework.SetOp(f.itemPath, data, version))
	switch {
	case err == nil:
		return f, session, taken
	case errors.Is(err, ErrDataTooLarge):
		// No room for the rewrite: lock as Curator does, unfenced.
		f.strong, f.version = false, version
		_, err = k.c().Create(ctx, f.lockNode, nil, framework.WithMode(framework.Ephemeral))
		if err == nil {
			return f, session, taken
		}
		if errors.Is(err, zk.ErrNodeExists) {
			return k.adopt(ctx, f, name)
		}
	case isOpErr(err, 0, zk.ErrNodeExists):
		return k.adopt(ctx, f, name)
	case isOpErr(err, 0, zk.ErrNoNode): // the lock path is missing
		k.q.setEnsured(false)
		if err := k.q.ensure(ctx); err == nil {
			k.again = true
		}
		return nil, 0, passed
	case isOpErr(err, 1, zk.ErrNoNode), isOpErr(err, 1, zk.ErrBadVersion):
		return nil, 0, collided // taken meanwhile
	}
	if ctx.Err() == nil {
		k.report(fmt.Errorf("item %s: lock: %w", name, err))
	}
	return nil, 0, passed
}

// adopt decides about a lock node found in place: another consumer's
// (pass the item by, and look again when that lock goes), or our own,
// made by a lock transaction whose reply was lost (take it up).
func (k *consumer) adopt(ctx context.Context, f *fence, name string) (*fence, int64, outcome) {
	session := k.c().SessionID()
	st, err := k.c().Exists(ctx, f.lockNode)
	if err != nil || st == nil || st.EphemeralOwner != session {
		k.others[name] = true
		if err == nil && st == nil {
			k.again = true // gone already
		}
		if k.q.onPass != nil {
			k.q.onPass(name)
		}
		return nil, 0, collided
	}
	_, ist, err := k.c().Get(ctx, f.itemPath)
	if err != nil {
		k.unlock(ctx, f, session)
		return nil, 0, passed
	}
	f.version = ist.Version
	return f, session, taken
}

// advanced checks what the consume function's own transaction did after
// it asked for RemoveOps: removed the node (done) or rewrote it (fence
// moves on); false when the consumer must stop on this node.
func (k *consumer) advanced(ctx context.Context, f *fence, session int64) bool {
	st, err := k.c().Exists(ctx, f.itemPath)
	switch {
	case err != nil:
		k.report(fmt.Errorf("item %s: %w", f.itemPath, err))
		k.unlock(ctx, f, session)
		return false
	case st == nil:
		k.unlock(ctx, f, session) // consumed by the caller's transaction
		return false
	case st.Version == f.version+1:
		f.version++
		return true
	case st.Version == f.version:
		return true // the caller's transaction did not run
	}
	k.report(fmt.Errorf("item %s: %w", f.itemPath, ErrFenced))
	return false
}

// requeued returns the items of a node to put back after fn failed on
// item i with err: from i on, but past i when err says the item cannot be
// read (ErrCorruptItem, from Typed's decoding): it would fail for ever.
func requeued(items [][]byte, i int, err error) [][]byte {
	if errors.Is(err, ErrCorruptItem) {
		return items[i+1:]
	}
	return items[i:]
}

// fail applies the error mode to the items left of a node after fn failed.
func (k *consumer) fail(ctx context.Context, f *fence, rest [][]byte, session int64) {
	if k.q.opts.errorMode == Delete {
		rest = nil
	}
	k.finish(ctx, f, rest, session)
}

// finish removes the item node and its lock in one fenced transaction,
// putting rest back at the tail of the queue in the same one (so a PutMulti
// node's items consumed already are not delivered again).
func (k *consumer) finish(ctx context.Context, f *fence, rest [][]byte, session int64) {
	cctx, cancel := k.c().CleanupContext(ctx)
	defer cancel()
	ops := []framework.Op{framework.DeleteOp(f.itemPath, f.version), framework.DeleteOp(f.lockNode, -1)}
	if len(rest) > 0 {
		_, name := framework.SplitPath(f.itemPath)
		ops = append(ops, framework.CreateOp(framework.JoinPath(k.q.path, requeueName(name)), encodeItems(rest), framework.PersistentSequential))
	}
	_, err := k.c().Multi(cctx, ops...)
	switch {
	case err == nil:
	case isOpErr(err, 0, zk.ErrNoNode) && k.lockGone(cctx, f):
		// Both gone: our transaction was applied and its reply lost
		// (the retry found nothing to delete).
	case isOpErr(err, 0, zk.ErrNoNode), isOpErr(err, 0, zk.ErrBadVersion), isOpErr(err, 1, zk.ErrNoNode):
		k.report(fmt.Errorf("item %s: %w", f.itemPath, ErrFenced))
		k.unlock(ctx, f, session)
	default:
		k.report(fmt.Errorf("item %s: remove: %w", f.itemPath, err))
		k.unlock(ctx, f, session)
	}
}

// lockGone reports whether the item's lock node is known to be gone.
func (k *consumer) lockGone(ctx context.Context, f *fence) bool {
	st, err := k.c().Exists(ctx, f.lockNode)
	return err == nil && st == nil
}

// unlock deletes our lock node, if it is still ours, so the item can be
// taken again at once. What it cannot delete goes with the session.
func (k *consumer) unlock(ctx context.Context, f *fence, session int64) {
	cctx, cancel := k.c().CleanupContext(ctx)
	defer cancel()
	st, err := k.c().Exists(cctx, f.lockNode)
	if err != nil || st == nil || st.EphemeralOwner != session {
		return
	}
	if err := k.c().Delete(cctx, f.lockNode, framework.WithVersion(st.Version)); err != nil && !errors.Is(err, zk.ErrNoNode) {
		k.report(fmt.Errorf("item %s: unlock: %w", f.itemPath, err))
	}
}

// item fills in what the variant's item name says (ID, Priority, Due).
func (k *consumer) item(it Item) Item {
	k.q.v.describe(&it)
	return it
}

// removeItem deletes an item node for its taker and reports whether the
// delete was this call's. It is a transaction of one delete, not a
// Delete: Delete takes a missing node on a retry (after a reply lost with
// the connection) for its own earlier attempt, but among consumers the
// node may as well have been another's take, and two would deliver the
// item. A transaction refused on its retry is never taken for ours: if
// the lost reply was our delete's, the item is nobody's, lost (these
// modes promise at most once), never delivered twice.
func removeItem(ctx context.Context, c *framework.Client, path string, version int32) (bool, error) {
	_, err := c.Multi(ctx, framework.DeleteOp(path, version))
	switch {
	case err == nil:
		return true, nil
	case isOpErr(err, 0, zk.ErrNoNode), isOpErr(err, 0, zk.ErrBadVersion):
		return false, nil
	}
	return false, err
}

// isOpErr reports whether err is a refused transaction whose operation i
// failed with want.
func isOpErr(err error, i int, want error) bool {
	var te *framework.TransactionError
	if !errors.As(err, &te) {
		return false
	}
	return te.Index == i && errors.Is(err, want)
}

// nonNil keeps empty data empty: nil means the client's default data.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
