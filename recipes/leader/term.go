package leader

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/fanout"
	"github.com/gocurator/curator/recipes/locking"
)

// Term is one period of leadership, from a Campaign that succeeded until
// Resign, the loss of the connection (per the election's ErrorPolicy), the
// end of our session, the deletion of our node by someone else, or the
// client's Close. It looks like a context: Done closes when it ends and Err
// says why. Safe for concurrent use. A nil *Term is safe too: it is a term
// that ended (Done closed, Err ErrNotLeader, Token 0).
type Term struct {
	e    *Election
	hold *locking.Hold
	vals context.Context // the Campaign's context, for Context's values

	ctxOnce sync.Once
	ctx     *termCtx // Context's, made when first asked for

	mu    sync.Mutex
	cause error      // why the term ended, fixed the first time it is known
	ctxs  []*termCtx // contexts to cancel when a look finds the term ended
}

// newTerm starts a term on hold and watches our node, so that its deletion
// by someone else ends the term (one watch, gone with the node).
func newTerm(e *Election, h *locking.Hold, ctx context.Context) *Term {
	t := &Term{e: e, hold: h, vals: context.WithoutCancel(ctx)}
	go t.watchNode()
	return t
}

// watchNode ends the term when our node is deleted while it lasts.
//
// It stays a one-shot GetW, not framework.Watch (style rule 16's
// exception for a lock's own node): the one-shot watch costs one request
// and leaves with the node, where Watch costs AddWatch, a read after it
// (a deletion before the watch is set would be missed) and RemoveWatches
// at the end, and a persistent watch sits in both of the server's watch
// tables. Measured on ZooKeeper 3.8 (cons, mntr zk_watch_count): a term
// costs 3 requests to begin and 1 to resign with one watch entry, on
// Watch 4 and 2 with two.
func (t *Term) watchNode() {
	ctx := holdContext{t}
	for {
		_, _, ch, err := t.e.c.GetWOrdered(ctx, t.hold.Node())
		if errors.Is(err, zk.ErrNoNode) {
			t.deleted()
			return
		}
		if err != nil {
			// The term ended (ctx), or the connection did: the hold ends by
			// itself on the states that count.
			if ctx.Err() != nil {
				return
			}
			if err := t.e.c.Pause(ctx, 100*time.Millisecond); err != nil {
				return
			}
			continue
		}
		select {
		case ev := <-ch:
			switch ev.Type {
			case zk.EventNodeDeleted:
				t.deleted()
				return
			case zk.EventNotWatching:
				// The session ended or the client closed: the hold ends
				// (or ended) by itself.
				return
			}
			// Data changed: watch again.
		case <-ctx.Done():
			// Our own Resign or loss: the watch fires when the node goes,
			// into a buffered channel nobody reads.
			return
		}
	}
}

// deleted ends the term because our node is gone.
func (t *Term) deleted() {
	t.mu.Lock()
	if t.cause == nil && t.hold.Err() == nil {
		t.cause = lost(ErrNodeDeleted)
	}
	t.mu.Unlock()
	ctx, cancel := t.e.c.CleanupContext(context.Background())
	defer cancel()
	if err := t.hold.Release(ctx); err == nil || errors.Is(err, framework.ErrClosed) {
		t.e.log.Info("leadership lost: our node was deleted", zap.String("path", t.e.path), zap.String("node", t.hold.Node()))
	}
}

// Done returns a channel that is closed when the term ends. It judges the
// session by the clock too: after a process pause past the session's
// deadline the first call returns a closed channel, and the term's
// contexts (Context, Run's function's) are cancelled before it returns.
func (t *Term) Done() <-chan struct{} {
	if t == nil {
		return fanout.Closed()
	}
	ch := t.hold.Done()
	select {
	case <-ch:
		t.endContexts()
	default:
	}
	return ch
}

// endContexts cancels the term's contexts once it has ended, so that a
// look at the term ends them (and the contexts derived from them) in the
// same call, not when their goroutine wakes.
func (t *Term) endContexts() {
	t.mu.Lock()
	cs := t.ctxs
	t.ctxs = nil
	t.mu.Unlock()
	for _, c := range cs {
		c.end()
	}
}

// Err returns nil while the term lasts; once it ended, why: ErrResigned,
// framework.ErrClosed, or ErrLeadershipLost together with the reason
// (ErrSuspended, ErrSessionLost, ErrNodeDeleted). The answer does not
// change once given.
func (t *Term) Err() error {
	if t == nil {
		return ErrNotLeader
	}
	err := t.err()
	if err != nil {
		t.endContexts()
	}
	return err
}

// err is Err without ending the term's contexts.
func (t *Term) err() error {
	herr := t.hold.Err()
	if herr == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cause != nil {
		return t.cause
	}
	// The reason is the one the hold recorded as it ended, not what the
	// connection is now: a term ended by Suspended says so even if read
	// after the session expired too.
	switch {
	case errors.Is(herr, framework.ErrClosed):
		t.cause = herr
	case errors.Is(herr, locking.ErrNotHeld):
		t.cause = ErrResigned
	case t.hold.LostIn() == connstate.Lost:
		t.cause = lost(ErrSessionLost)
	default:
		t.cause = lost(ErrSuspended)
	}
	return t.cause
}

// Context returns a context for the leader's work: it is cancelled when the
// term ends, carries the values of the Campaign's context (and the term,
// for FromContext), and has no deadline. Its Done, Err and Value judge the
// term as Done does, by the session's clock too: after a process pause past
// the session's deadline the first look finds it cancelled, and
// context.Cause gives the term's Err. A context derived from it after the
// term ended is cancelled at once; one derived earlier is cancelled in the
// same call as this one: by a look at this one or at the term (Done, Err),
// or once the client notices the end (see docs/leader.md, "Contexts after
// a pause"). Every
// call returns the same context; it costs a goroutine until the term ends.
// A nil Term's is cancelled, with ErrNotLeader as its cause.
func (t *Term) Context() context.Context {
	if t == nil {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(ErrNotLeader)
		return ctx
	}
	t.ctxOnce.Do(func() { t.ctx = newTermCtx(t.vals, t) })
	return t.ctx
}

// termKey is the context key under which a term's Context carries it.
type termKey struct{}

// FromContext returns the Term whose Context ctx is, or is derived from;
// nil if none. Run's function finds its term this way, for its Token and
// FencedMulti.
func FromContext(ctx context.Context) *Term {
	if ctx == nil {
		return nil
	}
	t, _ := ctx.Value(termKey{}).(*Term)
	return t
}

// Token returns the fencing token of the term: the czxid of our node. It is
// strictly greater than the token of every earlier term of the election (a
// later leader's node was created after the earlier leader's), so a
// resource that remembers the highest token it saw can refuse a deposed
// leader's writes. 0 for a nil Term.
func (t *Term) Token() int64 {
	if t == nil {
		return 0
	}
	return t.hold.FencingToken()
}

// Node returns the path of our node ("" for a nil Term).
func (t *Term) Node() string {
	if t == nil {
		return ""
	}
	return t.hold.Node()
}

// CheckOp returns a transaction operation that fails unless our node still
// exists: in front of a write, it makes the server apply the write only
// while this term can still lead. Once a newer term exists our node is gone
// (the next leader leads only after it went), so such a write is refused.
// Once the term ended it returns the term's Err (wrapped), and a nil
// Term's is ErrNotLeader, with the zero Op. See FencedMulti.
func (t *Term) CheckOp() (framework.Op, error) {
	if t == nil {
		return framework.Op{}, ErrNotLeader
	}
	if err := t.Err(); err != nil {
		return framework.Op{}, fmt.Errorf("leader %s: check: %w", t.e.path, err)
	}
	return t.hold.CheckOp(), nil
}

// FencedMulti runs ops in one transaction behind the term's CheckOp: the
// server applies them only while our node exists. When it does not, the
// error matches zk.ErrNoNode and nothing was applied. It does not look at
// Done: a term that ended locally while its node still exists (Suspended
// under the standard policy) can still write, and that is safe: nobody
// else leads while our node exists. If ctx ends before the reply, the
// error is ctx's and the transaction may still be applied after the call
// returned, but only while our node exists: never under a later term.
func (t *Term) FencedMulti(ctx context.Context, ops ...framework.Op) ([]zk.MultiResponse, error) {
	if t == nil {
		return nil, ErrNotLeader
	}
	check, err := t.CheckOp()
	if err != nil {
		return nil, err
	}
	all := append([]framework.Op{check}, ops...)
	res, err := t.e.c.Multi(ctx, all...)
	if err != nil {
		return res, fmt.Errorf("leader %s: fenced multi: %w", t.e.path, err)
	}
	return res[1:], nil
}

// Resign ends the term and deletes our node, so that the next candidate
// leads. The delete is guaranteed: if it fails (connection down, ctx ended)
// Resign returns the error and the delete goes on in the background until
// it succeeds or the client closes. After the term ended otherwise, Resign
// returns its Err (framework.ErrClosed after Close); a second Resign
// returns ErrNotLeader. A nil ctx is refused (framework.ErrInvalidOption)
// and the term goes on.
func (t *Term) Resign(ctx context.Context) error {
	if t == nil {
		return ErrNotLeader
	}
	if ctx == nil {
		return fmt.Errorf("leader %s: resign: %w: nil context", t.e.path, framework.ErrInvalidOption)
	}
	err := t.hold.Release(ctx)
	switch {
	case err == nil:
		t.e.log.Info("resigned", zap.String("path", t.e.path), zap.String("node", t.hold.Node()))
		return nil
	case errors.Is(err, framework.ErrClosed):
		return err
	case errors.Is(err, locking.ErrLockLost), errors.Is(err, locking.ErrNotHeld):
		if terr := t.Err(); terr != nil && !errors.Is(terr, ErrResigned) {
			return terr
		}
		return ErrNotLeader
	}
	return fmt.Errorf("leader %s: resign: %w", t.e.path, err)
}
