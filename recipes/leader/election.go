package leader

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locking"
	"github.com/gocurator/curator/retry"
)

// Lock names of the two layouts: the text before each node's sequence
// number, as Curator's LeaderLatch and LeaderSelector (its mutex) name them.
const (
	latchName    = "latch-"
	selectorName = "lock-"
)

// Election is one participant's handle on a leader election at a path: it
// campaigns (each Campaign is one candidacy, one node of ours) and reads the
// election (Leader, Participants, Observe). Safe for concurrent use;
// concurrent Campaigns on one handle are separate candidacies with the same
// id. A nil *Election is safe too: its calls return ErrNilHandle.
type Election struct {
	c      *framework.Client
	path   string
	id     string
	name   string // latchName or selectorName
	driver locking.StandardDriver
	// foreign are the layouts that the election refuses to share its
	// path with (see foreignLayouts).
	foreign []locking.Foreign
	l       *locking.Loop
	policy  connstate.ErrorPolicy // nil: the client's
	log     *zap.Logger
	// requeueOnError: Run campaigns again after fn fails (RequeueOnError).
	requeueOnError bool
}

// New returns a participant of the election at path, in Curator's
// LeaderLatch layout unless SelectorLayout is given. It does no I/O; a nil
// client or an invalid path is reported by every call (ErrNilClient,
// ErrInvalidPath).
func New(c *framework.Client, path string, opts ...Option) *Election {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	e := &Election{c: c, path: path, id: o.id, policy: o.policy, log: o.log, requeueOnError: o.requeueOnError}
	if e.log == nil {
		if c != nil {
			e.log = c.Logger().Named("leader")
		} else {
			e.log = zap.NewNop()
		}
	}
	// LeaderLatch writes the id's bytes, empty ones included;
	// LeaderSelector's mutex writes them only when the id is not empty,
	// else the client's default data.
	data := []byte(o.id)
	e.name = latchName
	if o.selector {
		e.name = selectorName
		if o.id == "" {
			data = nil
		}
	} else if data == nil {
		data = []byte{}
	}
	e.driver = locking.StandardDriver{LockName: e.name, Data: data}
	e.foreign = foreignLayouts(o.selector)
	e.l = locking.New(c, path, e.driver, locking.RefusingLayouts(e.foreign...),
		locking.WithLogger(e.log), locking.WithErrorPolicy(o.policy),
		locking.WithOneSession(ErrSessionLost), // a candidacy lives in one session
		locking.WithKind("leader"),             // the selector layout's nodes are a mutex's
		locking.WithName(o.telemetryName))
	return e
}

// Path returns the election's path ("" for a nil Election).
func (e *Election) Path() string {
	if e == nil {
		return ""
	}
	return e.path
}

// ID returns the participant id this handle campaigns with.
func (e *Election) ID() string {
	if e == nil {
		return ""
	}
	return e.id
}

func (e *Election) check(ctx context.Context) error {
	if e == nil {
		return ErrNilHandle
	}
	if err := e.l.Err(); err != nil {
		return fmt.Errorf("leader %s: %w", e.path, err)
	}
	if ctx == nil {
		return fmt.Errorf("leader %s: %w: nil context", e.path, framework.ErrInvalidOption)
	}
	return nil
}

// Campaign makes us a candidate and blocks until we lead, ctx ends, our
// session ends or the client closes. The leader is the participant whose
// node is first in sequence order, and we lead only while that node belongs
// to the client's live session (the check Curator's LeaderLatch lacks before
// 5.7, CURATOR-696). A candidate whose node is deleted by someone else while
// it waits makes a new one.
//
// A candidacy lives in one session: if the session ends while we wait
// (expired, or declared expired by the client after Suspended for the
// session timeout, as during a partition), Campaign returns ErrSessionLost
// rather than go on in a new session and return a term much later. On any
// failure the error is non-nil (never a nil Term with a nil error) and no
// node of ours is left (see "Nothing left behind" in docs/design.md): when
// ctx ends while our node's create is on its way, Campaign waits for the
// create's reply (at most a round trip more, none while disconnected) so
// that it can delete the node before it returns, rather than leave a node
// that the server makes after the call and that leads with no term. The
// error is ctx's
// (errors.Is context.Canceled or DeadlineExceeded), ErrSessionLost,
// framework.ErrClosed, or the ZooKeeper error the retry policy gave up on.
func (e *Election) Campaign(ctx context.Context) (*Term, error) {
	if err := e.check(ctx); err != nil {
		return nil, err
	}
	sess, err := e.session(ctx)
	if err != nil {
		return nil, fmt.Errorf("leader %s: campaign: %w", e.path, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("leader %s: campaign: %w", e.path, err)
	}
	// The candidacy ends with the session it began in: the loop's
	// WithOneSession returns ErrSessionLost (or framework.ErrClosed).
	h, err := e.acquire(ctx)
	if cerr := ctx.Err(); cerr != nil {
		// Ended while our create was on its way, the acquire may have
		// held at once: no term for a caller that has gone.
		if err == nil {
			rctx, cancel := e.c.CleanupContext(ctx)
			_ = h.Release(rctx)
			cancel()
		}
		return nil, fmt.Errorf("leader %s: campaign: %w", e.path, cerr)
	}
	if err != nil {
		return nil, fmt.Errorf("leader %s: campaign: %w", e.path, err)
	}
	// Never a term of a dead session: the hold ends at once if its session
	// is not the live one, and the live one must still be ours.
	if h.Session() != sess.ID() || e.c.SessionID() != sess.ID() || h.Err() != nil {
		herr := h.Err()
		_ = h.Release(ctx) // deletes our node (guaranteed) if it was still held
		if errors.Is(herr, framework.ErrClosed) {
			return nil, fmt.Errorf("leader %s: campaign: %w", e.path, framework.ErrClosed)
		}
		return nil, fmt.Errorf("leader %s: campaign: %w", e.path, ErrSessionLost)
	}
	t := newTerm(e, h, ctx)
	e.log.Info("leading", zap.String("path", e.path), zap.String("id", e.id),
		zap.String("node", h.Node()), zap.Int64("token", h.FencingToken()))
	return t, nil
}

// session waits for a live session and returns it.
func (e *Election) session(ctx context.Context) (*framework.Session, error) {
	for {
		if err := e.c.BlockUntilConnected(ctx); err != nil {
			return nil, err
		}
		if s := e.c.Session(); s.ID() != 0 {
			return s, nil
		}
		// Connected again but the new session is not recorded yet: wait
		// for the next state change.
		select {
		case <-e.c.StateChanged():
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-e.c.Done():
			return nil, framework.ErrClosed
		}
	}
}

// Run is Curator's LeaderSelector with auto-requeue: it campaigns, runs fn
// with the term's context while we lead, resigns when fn returns, and
// campaigns again, until ctx ends (then it returns ctx's error, having
// resigned). fn's context is cancelled when the term ends (connection
// suspended under the standard policy, session lost, node deleted) and
// when ctx ends, as Curator's close interrupts takeLeadership: fn must then
// stop acting as the leader, and Run campaigns again or returns. It
// carries ctx's values and deadline, and FromContext finds the term in it.
// Its Done, Err and Value judge the term by the session's clock, as
// Term.Done does: after a process pause past the session's deadline the
// first look finds it cancelled (Err context.Canceled, context.Cause the
// term's Err), before any goroutine ran; Term.Context says what holds for
// contexts derived from it. If fn returns an
// error while the term is still live, Run resigns and returns that error;
// with RequeueOnError it logs the error at Warn, resigns, pauses and
// campaigns again (Curator's autoRequeue after takeLeadership throws).
// A campaign that fails because the session ended, or after the retry
// policy gave up on a connection loss, is tried again after a pause; Run
// returns framework.ErrClosed once the client closes, and other errors (an
// invalid path, no permission) at once. Nothing is left behind when Run
// returns.
func (e *Election) Run(ctx context.Context, fn func(ctx context.Context) error) error {
	if e != nil && fn == nil {
		return fmt.Errorf("leader %s: run: %w: nil function", e.path, framework.ErrInvalidOption)
	}
	return e.run(ctx, func(t *Term) error {
		fctx, cancel := leaderContext(ctx, t)
		defer cancel()
		return fn(fctx)
	})
}

// leaderContext returns the context of Run's function for term t: under
// Run's ctx (its values, deadline and cancellation), with the term in it
// for FromContext, and cancelled when the term ends, judged at every look
// (termCtx). cancel ends it once fn returned.
func leaderContext(ctx context.Context, t *Term) (context.Context, context.CancelFunc) {
	c := newTermCtx(ctx, t)
	return c, c.release
}

// run is Run with fn given the term.
func (e *Election) run(ctx context.Context, fn func(t *Term) error) error {
	if err := e.check(ctx); err != nil {
		return err
	}
	// The pause before the next campaign grows while campaigns fail and
	// (with RequeueOnError) while fn fails, and starts again after a term
	// whose function did not fail.
	pause := requeueMin
	for {
		t, err := e.Campaign(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if !requeueable(err) {
				return err
			}
			e.log.Debug("campaign failed; campaigning again", zap.String("path", e.path), zap.Error(err))
			if err := e.c.Pause(ctx, pause); err != nil {
				return err
			}
			pause = min(2*pause, requeueMax)
			continue
		}
		ferr := fn(t)
		ended := t.Err() != nil
		rctx, cancel := e.c.CleanupContext(ctx)
		_ = t.Resign(rctx)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// An error returned after the term ended is the term's end seen
		// by fn, not a failure of fn.
		failed := ferr != nil && !ended
		if failed && !e.requeueOnError {
			return ferr
		}
		if errors.Is(t.Err(), framework.ErrClosed) {
			return fmt.Errorf("leader %s: run: %w", e.path, framework.ErrClosed)
		}
		if !failed {
			pause = requeueMin
			continue
		}
		e.log.Warn("leader function failed; campaigning again", zap.String("path", e.path),
			zap.String("id", e.id), zap.Int64("token", t.Token()), zap.Duration("pause", pause), zap.Error(ferr))
		if err := e.c.Pause(ctx, pause); err != nil {
			return err
		}
		pause = min(2*pause, requeueMax)
	}
}

// Pauses of Run between failed campaigns, and between failed terms with
// RequeueOnError.
const (
	requeueMin = 50 * time.Millisecond
	requeueMax = 2 * time.Second
)

// requeueable reports whether Run campaigns again after err.
func requeueable(err error) bool {
	switch {
	case errors.Is(err, framework.ErrClosed), errors.Is(err, framework.ErrInvalidOption),
		errors.Is(err, ErrInvalidPath), errors.Is(err, ErrNilClient):
		return false
	case errors.Is(err, ErrSessionLost), errors.Is(err, locking.ErrLockLost), retry.IsRetryable(err):
		return true
	}
	return false
}

// Participant is one candidate as every participant sees it (Curator's
// Participant): the id in its node, and whether it leads.
type Participant struct {
	ID       string
	IsLeader bool
}

// Participants returns the candidates in sequence order, the leader first
// (IsLeader true), as Curator's getParticipants reports them: the leader is
// the first participant whose node could be read, so a node that went while
// we read is skipped. An election that never ran has none (an empty slice,
// no error). It reads the election's directory and each node: 1 + n round
// trips, sent concurrently.
func (e *Election) Participants(ctx context.Context) ([]Participant, error) {
	if err := e.check(ctx); err != nil {
		return nil, err
	}
	ps, _, err := e.read(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("leader %s: participants: %w", e.path, err)
	}
	return ps, nil
}

// Leader returns the leader: the first participant whose node could be
// read (Curator's getLeader); ErrNoLeader when there is none. Note that the
// participant of a node whose session just expired on the server may be
// reported until the server deletes the node.
func (e *Election) Leader(ctx context.Context) (Participant, error) {
	if err := e.check(ctx); err != nil {
		return Participant{}, err
	}
	ps, _, err := e.read(ctx, true)
	if err != nil {
		return Participant{}, fmt.Errorf("leader %s: %w", e.path, err)
	}
	if len(ps) == 0 {
		return Participant{}, fmt.Errorf("leader %s: %w", e.path, ErrNoLeader)
	}
	return ps[0], nil
}

// node is a participant's node as read.
type node struct {
	name string
	stat *zk.Stat
}

// read lists the election and reads its nodes in order; with first it
// stops at the first readable one. It returns the participants and their
// nodes.
func (e *Election) read(ctx context.Context, first bool) ([]Participant, []node, error) {
	children, _, err := e.c.Children(ctx, e.path)
	if errors.Is(err, zk.ErrNoNode) {
		return []Participant{}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return e.readNodes(ctx, children, first)
}

// readNodes reads the participants among children (their data is the id);
// see read.
func (e *Election) readNodes(ctx context.Context, children []string, first bool) ([]Participant, []node, error) {
	if err := locking.CheckForeign(ctx, e.c, e.path, children, e.foreign...); err != nil {
		return nil, nil, err
	}
	sorted := locking.SortChildren(children, e.driver.Sequence)
	type got struct {
		data []byte
		stat *zk.Stat
		err  error
	}
	var results []got
	if first {
		// One at a time until one is readable: usually the first.
		for _, name := range sorted {
			d, st, err := e.c.Get(ctx, framework.JoinPath(e.path, name))
			if errors.Is(err, zk.ErrNoNode) {
				continue
			}
			if err != nil {
				return nil, nil, err
			}
			return []Participant{{ID: string(d), IsLeader: true}}, []node{{name, st}}, nil
		}
		return []Participant{}, nil, nil
	}
	// A node gone since the listing is skipped, not an error; any other
	// error ends the read (and cancels the reads still in flight).
	results = make([]got, len(sorted))
	g, gctx := errgroup.WithContext(ctx)
	for i, name := range sorted {
		g.Go(func() error {
			d, st, err := e.c.Get(gctx, framework.JoinPath(e.path, name))
			results[i] = got{d, st, err}
			if errors.Is(err, zk.ErrNoNode) {
				return nil
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	ps := make([]Participant, 0, len(sorted))
	nodes := make([]node, 0, len(sorted))
	for i, r := range results {
		if errors.Is(r.err, zk.ErrNoNode) {
			continue
		}
		ps = append(ps, Participant{ID: string(r.data), IsLeader: len(ps) == 0})
		nodes = append(nodes, node{sorted[i], r.stat})
	}
	return ps, nodes, nil
}
