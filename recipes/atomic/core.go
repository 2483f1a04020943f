package atomic

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	stdatomic "sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/writegrace"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/retry"
)

// core is the byte-valued read-modify-write loop every handle runs on
// (Curator's DistributedAtomicValue), with the stamped write that makes an
// update exactly-once.
type core struct {
	c      *framework.Client
	path   string
	err    error // bad input found by the constructor, returned by every call
	opts   options
	log    *zap.Logger
	lock   *mutex.Mutex // the promoted lock; nil without PromotedToLock
	writer string       // the writer child: "<path>/writer-<uuid>"

	// writing is held (1-buffered) by the update in progress: the stamp
	// tells one update's attempts from another's only if they do not mix.
	// Close takes it for good.
	writing chan struct{}
	// Guarded by writing.
	stamp         uint64 // of the last attempt
	writerSession int64  // the session the writer child exists in; 0: unknown
	// attempted is the session of the last attempt, in which the writer
	// child may exist; -1 when it was made with no session (it ran in the
	// next one, unknown here); 0 before the first.
	attempted int64

	// closed is closed by Close: later calls, and calls waiting for the
	// write turn, fail with ErrClosed.
	closed chan struct{}
	mu     sync.Mutex
	// isClosed is set by the first Close. Guarded by mu.
	isClosed bool
	// orphaned is set when Close's ctx ended while an update held the
	// write turn: that update removes the writer child as it ends, and
	// keeps the turn. Guarded by mu.
	orphaned bool

	// unstamped is set once the value's node refused the writer child
	// (an ACL without CREATE, or an ephemeral node): writes are then
	// plain versioned sets, as Curator's. Guarded by writing.
	unstamped bool

	// promoted is set while the tries run under the promoted lock.
	// Guarded by writing.
	promoted bool
	// beforeWrite, if set (tests), runs between an attempt's read and its
	// write, told whether the try is promoted.
	beforeWrite func(promoted bool)
}

func newCore(c *framework.Client, path string, opts []Option) *core {
	k := &core{c: c, path: path, log: zap.NewNop(), writing: make(chan struct{}, 1), closed: make(chan struct{})}
	for _, o := range opts {
		if o != nil {
			o(&k.opts)
		}
	}
	switch {
	case c == nil:
		k.err = ErrNilClient
		return k
	case framework.ValidatePath(path) != nil:
		k.err = framework.ValidatePath(path)
		return k
	case path == "/":
		k.err = fmt.Errorf("%w: an atomic value cannot live at the root", ErrInvalidPath)
		return k
	}
	if k.opts.lockPath != "" {
		if err := framework.ValidatePath(k.opts.lockPath); err != nil {
			k.err = fmt.Errorf("promoted lock: %w", err)
			return k
		}
		k.lock = mutex.New(c, k.opts.lockPath)
	}
	if k.opts.policy == nil {
		k.opts.policy = c.RetryPolicy()
		k.opts.clientPolicy = true
	}
	if k.opts.promotedPolicy == nil {
		k.opts.promotedPolicy = k.opts.policy
		k.opts.samePromoted = true
	}
	k.writer = framework.JoinPath(path, "writer-"+uuid.NewString())
	k.log = c.Logger().Named("atomic").With(zap.String("path", path))
	return k
}

func (k *core) wrap(op string, err error) error {
	return fmt.Errorf("atomic %s: %s: %w", k.path, op, err)
}

// begin takes the handle's write turn, or fails with ctx's error, the
// constructor's, or ErrClosed once Close has run.
func (k *core) begin(ctx context.Context) error {
	if err := k.usable(ctx); err != nil {
		return err
	}
	select {
	case k.writing <- struct{}{}:
	case <-k.closed:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	// Close may have come while we waited, and the select chose at random.
	if err := k.open(); err != nil {
		k.end()
		return err
	}
	return nil
}

// usable returns the constructor's error, ErrInvalidOption for a nil ctx,
// or ErrClosed once Close has run.
func (k *core) usable(ctx context.Context) error {
	if k.err != nil {
		return k.err
	}
	if ctx == nil {
		return fmt.Errorf("%w: nil context", framework.ErrInvalidOption)
	}
	return k.open()
}

// open returns ErrClosed once Close has run.
func (k *core) open() error {
	select {
	case <-k.closed:
		return ErrClosed
	default:
		return nil
	}
}

// end gives the write turn back; if Close gave up waiting for this
// update, it removes the writer child instead, in the background, and
// keeps the turn, as Close would have.
func (k *core) end() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.orphaned {
		k.orphaned = false
		ended, cancel := context.WithCancel(context.Background())
		cancel()
		if err := k.removeWriter(ended); err != nil {
			k.log.Debug("the writer child is deleted in the background", zap.Error(err))
		}
		return
	}
	<-k.writing
}

// close makes later calls fail with ErrClosed, waits on ctx for the update
// in progress, and deletes the writer child (see Number.Close).
func (k *core) close(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", framework.ErrInvalidOption)
	}
	k.mu.Lock()
	if k.isClosed {
		k.mu.Unlock()
		return nil
	}
	k.isClosed = true
	close(k.closed)
	k.mu.Unlock()
	if k.err != nil {
		return nil // never wrote
	}
	select {
	case k.writing <- struct{}{}: // the turn, kept for good
		return k.removeWriter(ctx)
	case <-ctx.Done():
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	select {
	case k.writing <- struct{}{}: // the update ended just now
		ended, cancel := context.WithCancel(context.Background())
		cancel()
		_ = k.removeWriter(ended)
	default:
		k.orphaned = true // the update removes it as it ends
	}
	return ctx.Err()
}

// removeWriter deletes the writer child if it may exist in the live
// session: made by an attempt in it (or in no known session), or found
// there by a check. Any other session's child went, or goes, with that
// session. The child's name is
// this handle's own, and a closed handle never makes it again, so the
// delete cannot take anyone else's node. If the connection is down or ctx
// ends, the delete goes on in the background (framework.Guaranteed) and
// its error is returned. The caller holds the write turn.
func (k *core) removeWriter(ctx context.Context) error {
	live := k.c.SessionID()
	if live == 0 || (k.writerSession != live && k.attempted != live && k.attempted != -1) {
		return nil
	}
	err := k.c.Delete(ctx, k.writer, framework.Quietly(), framework.Guaranteed())
	if err == nil || errors.Is(err, framework.ErrClosed) || (k.unstamped && errors.Is(err, zk.ErrNoAuth)) {
		// NoAuth: the node refused the child, which was never made.
		// Closed: the session, and the ephemeral child, ended with it.
		k.writerSession, k.attempted = 0, 0
		return nil
	}
	return err
}

// read returns the node's data and Stat; a missing node is nil data and a
// nil Stat.
func (k *core) read(ctx context.Context) ([]byte, *zk.Stat, error) {
	data, stat, err := k.c.Get(ctx, k.path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil, nil
	}
	return data, stat, err
}

// conflict reports whether err says another writer came first: the try may
// be made again on a fresh read.
func conflict(err error) bool {
	return errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNodeExists) || errors.Is(err, zk.ErrNoNode)
}

// write sets the node to data if its version is still version (-1: any),
// or with create makes it, and reports whether that happened. The write is
// one transaction with the stamp of this attempt on the writer child, so
// that after any failure (a reply lost to a connection drop and the
// client's retry refused on the version the first attempt moved, say) the
// stamp tells whether it was applied. A refusal (another writer came first)
// is false with an error for which conflict is true.
func (k *core) write(ctx context.Context, create bool, version int32, data []byte) (bool, error) {
	if k.unstamped && !create {
		return k.writePlain(ctx, version, data)
	}
	for fixes := 0; ; fixes++ {
		k.stamp++
		stamp := make([]byte, 8)
		binary.BigEndian.PutUint64(stamp, k.stamp)
		session := k.c.SessionID()
		ops := make([]framework.Op, 0, 2)
		if create {
			ops = append(ops, framework.CreateOp(k.path, data, framework.Persistent))
		} else {
			ops = append(ops, framework.SetOp(k.path, data, version))
		}
		if session != 0 && k.writerSession == session {
			ops = append(ops, framework.SetOp(k.writer, stamp, -1))
		} else {
			ops = append(ops, framework.CreateOp(k.writer, stamp, framework.Ephemeral))
		}
		if k.beforeWrite != nil {
			k.beforeWrite(k.promoted)
		}
		k.attempted = session
		if session == 0 {
			k.attempted = -1
		}
		var sent stdatomic.Int32
		wctx, done := writegrace.Context(ctx)
		_, err := k.c.Multi(framework.CountingAttempts(wctx, &sent), ops...)
		err = done(err)
		if err == nil {
			k.writerSession, k.unstamped = session, false
			return true, nil
		}
		var txErr *framework.TransactionError
		if !create && errors.As(err, &txErr) && txErr.Index == 1 && refusesWriter(err) {
			// The value's node takes no child: it was made by someone
			// else, without CREATE for us or as an ephemeral node, and
			// Curator (which writes no child) updates it. The whole
			// transaction was refused, unless an earlier attempt of it,
			// whose reply was lost, went through before an ACL change.
			if sent.Load() > 1 {
				if applied, cerr := k.check(ctx, session, stamp); cerr == nil && applied {
					return true, nil
				}
			}
			k.log.Info("the value's node refuses the writer child; writing without it (a lost reply is then ErrUnknownOutcome)", zap.Error(err))
			k.unstamped = true
			if k.writerSession != session {
				k.attempted = 0 // no child was made: Close has none to delete
			}
			return k.writePlain(ctx, version, data)
		}
		if sent.Load() == 1 && errors.As(err, &txErr) && txErr.Index == 0 && conflict(err) &&
			!(create && errors.Is(err, zk.ErrNoNode)) {
			// One attempt, refused on the value's own node: another
			// writer came first, and nothing was applied. Only a retried
			// attempt (a reply lost) needs the stamp read back, which
			// keeps a contended update at Curator's two round trips a try.
			return false, err
		}
		before := k.writerSession
		applied, cerr := k.check(ctx, session, stamp)
		switch {
		case cerr != nil:
			return false, cerr
		case applied:
			k.log.Debug("write applied although its reply was lost", zap.Error(err))
			return true, nil
		case create && errors.Is(err, zk.ErrNoNode) && fixes < 3:
			// The parent is missing (Curator creates parents as containers).
			if perr := k.makeParent(ctx); perr != nil {
				return false, perr
			}
			continue
		case before != k.writerSession && fixes < 3:
			// Our idea of the writer child was wrong, which may be all that
			// failed: try again on the same read.
			continue
		}
		return false, err
	}
}

// refusesWriter reports whether err says the value's node may not have
// the writer child: no CREATE permission on it, or it is ephemeral.
func refusesWriter(err error) bool {
	return errors.Is(err, zk.ErrNoAuth) || errors.Is(err, zk.ErrNoChildrenForEphemerals)
}

// writePlain is write for a node that takes no writer child: a versioned
// set, as Curator's, which is exactly-once as long as no reply is lost. A
// set sent again after a lost reply and refused on the version may have
// been applied by its first attempt; without a stamp that is told only
// when another writer's data is at the version ours would have made (then
// ours was refused). Otherwise it is ErrUnknownOutcome: never counted
// twice, as Curator 5.4 does, and never guessed.
func (k *core) writePlain(ctx context.Context, version int32, data []byte) (bool, error) {
	if k.beforeWrite != nil {
		k.beforeWrite(k.promoted)
	}
	var sent stdatomic.Int32
	wctx, done := writegrace.Context(ctx)
	_, err := k.c.Set(framework.CountingAttempts(wctx, &sent), k.path, data, version)
	err = done(err)
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, zk.ErrBadVersion) || sent.Load() <= 1 {
		return false, err // refused at once: a conflict, or a plain error
	}
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if ctx.Err() != nil {
		cctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	}
	defer cancel()
	got, stat, rerr := k.read(cctx)
	switch {
	case rerr != nil:
		return false, fmt.Errorf("%w: %w", ErrUnknownOutcome, rerr)
	case stat != nil && stat.Version == version+1 && !bytes.Equal(got, data):
		return false, err // another writer made the version ours needed
	}
	// err is not wrapped: a version refusal would read as a conflict,
	// and the caller would try again, counting twice.
	return false, fmt.Errorf("%w: a set sent again after a lost reply was refused (%v), and the node (no writer child) cannot tell whether the first was applied", ErrUnknownOutcome, err)
}

// check reads the writer child after a failed write of stamp made in
// session, and says whether the write was applied. It waits for a
// connection on ctx; once ctx has ended it still tries for a moment, so
// that a write cut short by ctx is settled when it can be.
func (k *core) check(ctx context.Context, session int64, stamp []byte) (bool, error) {
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if ctx.Err() != nil {
		cctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	}
	defer cancel()
	got, _, err := k.c.Get(cctx, k.writer)
	now := k.c.SessionID()
	switch {
	case errors.Is(err, zk.ErrNoNode):
		k.writerSession = 0
		if now != session {
			// The write may have been applied in the session that ended,
			// whose writer child went with it.
			return false, ErrUnknownOutcome
		}
		return false, nil
	case err != nil:
		return false, fmt.Errorf("%w: %w", ErrUnknownOutcome, err)
	}
	k.writerSession = now
	return string(got) == string(stamp), nil
}

// makeParent creates the node's missing ancestors as containers.
func (k *core) makeParent(ctx context.Context) error {
	parent, _ := framework.SplitPath(k.path)
	if parent == "/" {
		return nil
	}
	_, err := k.c.Create(ctx, parent, []byte{}, framework.WithMode(framework.Container), framework.CreatingParentContainers())
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return err
	}
	return nil
}

// update applies next to the current value: optimistic tries under the
// retry policy, then, if promoted, tries holding the lock. Contention that
// outlasts the policies is a Result that did not succeed, not an error.
//
// res is named: the deferred PromotedTime below must reach the caller.
func (k *core) update(ctx context.Context, next func(pre []byte) ([]byte, error)) (res Result[[]byte], _ error) {
	if err := k.begin(ctx); err != nil {
		return res, err
	}
	defer k.end()
	start := time.Now()
	ok, err := k.tries(ctx, k.opts.policy, next, &res, &res.Stats.OptimisticTries)
	res.Stats.OptimisticTime = time.Since(start)
	if ok || err != nil || k.lock == nil {
		return res, err
	}
	start = time.Now()
	defer func() { res.Stats.PromotedTime = time.Since(start) }()
	lctx, cancel := ctx, context.CancelFunc(func() {})
	if k.opts.lockTimeout > 0 {
		lctx, cancel = context.WithTimeout(ctx, k.opts.lockTimeout)
	}
	err = k.lock.Acquire(lctx)
	cancel()
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return res, nil // the lock's own timeout: not applied
		}
		return res, fmt.Errorf("promoted lock: %w", err)
	}
	defer func() {
		rctx, cancel := k.c.CleanupContext(ctx)
		defer cancel()
		if rerr := k.lock.Release(rctx); rerr != nil {
			k.log.Info("releasing the promoted lock failed; it is deleted in the background", zap.Error(rerr))
		}
	}()
	k.promoted = true
	defer func() { k.promoted = false }()
	_, err = k.tries(ctx, k.opts.promotedPolicy, next, &res, &res.Stats.PromotedTries)
	return res, err
}

// tries makes optimistic tries until one is applied, the policy gives up
// (false, nil) or an error that is not a conflict ends them.
func (k *core) tries(ctx context.Context, p retry.Policy, next func([]byte) ([]byte, error), res *Result[[]byte], count *int) (bool, error) {
	start := time.Now()
	for n := 0; ; n++ {
		*count++
		pre, stat, err := k.read(ctx)
		if err != nil {
			return false, err
		}
		res.PreValue = pre
		post, err := next(pre)
		if err != nil {
			return false, err
		}
		var version int32 = -1
		if stat != nil {
			version = stat.Version
		}
		applied, err := k.write(ctx, stat == nil, version, post)
		if applied {
			res.Succeeded, res.PostValue = true, post
			return true, nil
		}
		if !conflict(err) {
			return false, err
		}
		sleep, again := p.AllowRetry(n, time.Since(start))
		if !again {
			return false, nil
		}
		if err := k.c.Pause(ctx, sleep); err != nil {
			return false, err
		}
	}
}

// compareAndSet writes post only if the node exists and holds what equal
// accepts, in one try (Curator's compareAndSet).
func (k *core) compareAndSet(ctx context.Context, equal func(cur []byte) (bool, error), post []byte) (Result[[]byte], error) {
	var res Result[[]byte]
	if err := k.begin(ctx); err != nil {
		return res, err
	}
	defer k.end()
	start := time.Now()
	defer func() { res.Stats.OptimisticTime = time.Since(start) }()
	res.Stats.OptimisticTries = 1
	pre, stat, err := k.read(ctx)
	if err != nil {
		return res, err
	}
	res.PreValue = pre
	if stat == nil {
		return res, nil
	}
	if ok, err := equal(pre); err != nil || !ok {
		return res, err
	}
	applied, err := k.write(ctx, false, stat.Version, post)
	if applied {
		res.Succeeded, res.PostValue = true, post
		return res, nil
	}
	if conflict(err) {
		return res, nil
	}
	return res, err
}

// forceSet writes data whatever the current value, making the node if
// it is missing (Curator's forceSet).
func (k *core) forceSet(ctx context.Context, data []byte) error {
	if err := k.begin(ctx); err != nil {
		return err
	}
	defer k.end()
	for {
		applied, err := k.write(ctx, false, -1, data)
		if applied {
			return nil
		}
		if !errors.Is(err, zk.ErrNoNode) {
			return err
		}
		applied, err = k.write(ctx, true, -1, data)
		if applied {
			return nil
		}
		if !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
}

// initialize makes the node with data if it does not exist, and reports
// whether it did (Curator's initialize).
func (k *core) initialize(ctx context.Context, data []byte) (bool, error) {
	if err := k.begin(ctx); err != nil {
		return false, err
	}
	defer k.end()
	applied, err := k.write(ctx, true, -1, data)
	if applied {
		return true, nil
	}
	if errors.Is(err, zk.ErrNodeExists) {
		return false, nil
	}
	return false, err
}
