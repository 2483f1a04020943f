package node

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/clock"
	"github.com/gocurator/curator/retry"
)

const (
	// pauseMin and pauseMax bound the pause between failed attempts.
	pauseMin = 50 * time.Millisecond
	pauseMax = 2 * time.Second
	// cleanupBudget bounds a delete that runs after its caller returned.
	cleanupBudget = 30 * time.Second
	// touchName is the TTL node's child, as Curator names it.
	touchName = "touch"
)

// errAgain asks the loop to create again at once (the node that held the
// path has gone).
var errAgain = errors.New("again")

// registration is our node as made (or found ours).
type registration struct {
	path  string
	czxid int64
	owner int64 // ephemeralOwner, 0 for persistent modes
}

// loop keeps our node: create, hold until it is lost, create again. The
// node is watched with one-shot data watches (see watched), the first
// sent beside the create.
func (n *Node) loop(ctx context.Context, r *run) {
	defer close(r.done)
	pause := pauseMin
	started := false
	// fail handles a failed step and reports whether the loop ends. A
	// Start still waiting hears of errors that retrying cannot mend;
	// after it, everything but the client's end is retried.
	fail := func(err error) bool {
		if errors.Is(err, framework.ErrClosed) || ctx.Err() != nil {
			return true
		}
		if !started && !retry.IsRetryable(err) {
			r.err = err
			return true
		}
		n.log.Debug("node: attempt failed; trying again", zap.Error(err))
		n.setStatus(Event{State: n.lostState(started), Path: n.Path(), Reason: err})
		if n.c.Pause(ctx, pause) != nil {
			return true
		}
		pause = min(2*pause, pauseMax)
		return false
	}
	// wctx carries the loop's creates. It is never cancelled: a create
	// abandoned at ctx's end may still be sent and applied after the
	// loop has ended and stop has deleted "what exists", leaving a node
	// made again after Close (a ghost member, CURATOR-164's symptom).
	// So the loop waits for each create's reply (or for the retry
	// policy to give up), and r.done, closed when the loop ends, means
	// that no create of ours is in flight: what stop deletes then is
	// all there will be. Its Done is nil, so the framework runs the
	// request on this goroutine rather than leave it running behind.
	wctx := context.WithoutCancel(ctx)
	for ctx.Err() == nil {
		target, first := n.target()
		var ahead <-chan lookResult
		if !first || n.plain() {
			// The watch goes beside the create, in its round trip.
			ahead = n.lookAhead(wctx, target)
		}
		reg, err := n.create(wctx, target, first)
		var w watched
		werr := errNotLooked
		if ahead != nil {
			res := <-ahead
			w, werr = res.w, res.err
		}
		if ctx.Err() != nil || err != nil || werr != nil || w.stat.Czxid != reg.czxid {
			// The look went ahead of the create, failed, or found
			// another node: its watch, if any, goes back.
			n.giveBack(wctx, target, w)
			w = watched{}
		}
		if ctx.Err() != nil {
			// Stopped while creating: a node made is deleted by stop
			// (after a read of its owner), never reported as
			// registered.
			return
		}
		switch {
		case errors.Is(err, zk.ErrNodeExists):
			reg, w, err = n.found(ctx, wctx, target, started)
		case err == nil && w.ch == nil:
			w, err = n.arm(wctx, reg)
		}
		if errors.Is(err, errAgain) {
			continue
		}
		if err != nil {
			if fail(err) {
				return
			}
			continue
		}
		if n.o.ttl > 0 {
			// The touch child exists before Start returns, so a TTL
			// node stopped at once is still reaped by its TTL.
			n.touch(ctx, reg.path)
		}
		pause = pauseMin
		// Our data goes on an adopted node (or one made with older
		// data) before it is reported: Start returns with it there.
		n.mu.Lock()
		n.reg = reg
		n.mu.Unlock()
		if err := n.pushData(ctx); err != nil && ctx.Err() == nil {
			n.log.Debug("node: data not written yet", zap.Error(err))
		}
		n.registered(reg)
		if !started {
			started = true
			close(r.first)
		}
		reason := n.hold(ctx, w, reg)
		n.unregister()
		if ctx.Err() != nil || errors.Is(reason, framework.ErrClosed) {
			return
		}
		n.log.Info("node: lost; making it again", zap.String("node", reg.path), zap.Error(reason))
		n.setStatus(Event{State: Recreating, Path: reg.path, Reason: reason})
	}
}

// watched is a one-shot data watch on a node, set by a read
// (GetWOrdered) that found it with stat: ch gets the node's
// first change after that read (its deletion, a write), or
// EventNotWatching when the session ends or the client closes. The
// channel is go-zookeeper's own, filled as the frames are read, so an
// event the server sent before the reply to a later request of ours is
// in ch by the time that reply has been read (ZooKeeper sends a session's
// watch events and replies in the order it made them). state is the
// client's StateChanged from before the read: once closed, a
// reconnection may have come since, and the server reports a change made
// during a cut only after the reconnection, so ch's silence proves
// nothing more.
type watched struct {
	ch    <-chan zk.Event
	stat  *zk.Stat // as the read found the node
	state <-chan struct{}
}

// quiet reports whether w has heard of no change since its read and the
// connection has stayed up: the node it watches is, as far as anything
// this client has read can tell, as the read found it (see known).
func (w watched) quiet() bool {
	select {
	case <-w.ch:
		return false
	case <-w.state:
		return false
	default:
		return w.ch != nil
	}
}

// giveBack gives back w's watch on path if it has not fired: a one-shot
// watch stays on the server until it fires, and a node we stop watching
// may never change (pitfall 9). A watch our own delete fires has fired by
// the time the delete's reply is read: nothing is sent then.
func (n *Node) giveBack(ctx context.Context, path string, w watched) {
	if w.ch == nil {
		return
	}
	select {
	case <-w.ch:
		return
	default:
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupBudget)
	defer cancel()
	if err := n.c.Unwatch(ctx, path, framework.DataWatch); err != nil {
		n.log.Debug("node: watch not given back", zap.Error(err))
	}
}

// errNotLooked is the look-ahead's result when there was none.
var errNotLooked = errors.New("not looked")

// lookResult is what the read sent beside a create found.
type lookResult struct {
	w   watched
	err error
}

// lookAhead reads path with a data watch, beside the create the caller
// is about to send, and returns the channel that gets its result.
// ZooKeeper answers a session's requests in order, so a read that
// reaches the server after the create finds our node and watches it,
// in the create's round trip; one that goes first finds no node (or the
// node that makes the create fail), and the caller looks again (arm).
// The order of two requests sent from two goroutines is not known; it
// decides the cost only, never the outcome.
func (n *Node) lookAhead(ctx context.Context, path string) <-chan lookResult {
	out := make(chan lookResult, 1)
	go func() {
		// Let the create be queued first: the caller goes on to it
		// while this goroutine waits for a turn.
		runtime.Gosched()
		w, err := n.look(ctx, path)
		out <- lookResult{w, err}
	}()
	return out
}

// look reads the node at path and sets a data watch on it; zk.ErrNoNode
// (wrapped) if missing, which leaves no watch on the server. ctx must not
// end before the reply for any reason but the end of the session: a read
// abandoned on its way may still set a watch that nobody gives back.
func (n *Node) look(ctx context.Context, path string) (watched, error) {
	state := n.c.StateChanged()
	_, st, ch, err := n.c.GetWOrdered(ctx, path, framework.Uncompressed())
	if err != nil {
		return watched{}, err
	}
	return watched{ch: ch, stat: st, state: state}, nil
}

// arm watches our node reg: errAgain if it is gone or another
// incarnation holds the path (the loop makes it again, or waits for the
// other to go).
func (n *Node) arm(ctx context.Context, reg registration) (watched, error) {
	w, err := n.look(ctx, reg.path)
	switch {
	case isNoNode(err):
		return watched{}, errAgain
	case err != nil:
		return watched{}, err
	case w.stat.Czxid != reg.czxid:
		return watched{}, errAgain
	}
	return w, nil
}

func (n *Node) lostState(started bool) State {
	if started {
		return Recreating
	}
	return Creating
}

// plain reports whether the node's path is known before the first
// create: neither protected nor sequential.
func (n *Node) plain() bool { return !n.o.protected && !n.o.mode.IsSequential() }

// target returns the path to create and whether it is the first create
// (the requested path, to be renamed by protection or a sequence number).
func (n *Node) target() (string, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.actual != "" {
		return n.actual, false
	}
	return n.path, true
}

// create makes our node at target: the first create in the Node's mode,
// with protection if asked; later ones under the name the first got, in
// the mode's non-sequential form.
func (n *Node) create(ctx context.Context, target string, first bool) (registration, error) {
	mode := n.o.mode
	opts := make([]framework.CreateOption, 0, 5)
	if first {
		if n.o.protected {
			opts = append(opts, framework.Protected())
		}
	} else {
		mode = nonSequential(mode)
	}
	opts = append(opts, framework.WithMode(mode))
	if n.o.ttl > 0 {
		opts = append(opts, framework.WithTTL(n.o.ttl))
	}
	if !n.o.noParents {
		opts = append(opts, framework.CreatingParentContainers())
	}
	var st zk.Stat
	opts = append(opts, framework.StoringStatIn(&st))
	n.mu.Lock()
	data, gen := n.data, n.gen
	n.noteSessionLocked()
	n.mu.Unlock()
	p, err := n.c.Create(ctx, target, data, opts...)
	n.mu.Lock()
	n.noteSessionLocked()
	if err == nil {
		if first {
			n.actual = p
		}
		n.czxids[st.Czxid] = true
		n.version, n.pushed, n.dirty = st.Version, gen, false
		n.fits, n.fitsGen = data, gen
	}
	n.mu.Unlock()
	if errors.Is(err, framework.ErrDataTooLarge) && n.refused(gen, err) {
		return registration{}, errAgain // made again at once, with data that fits
	}
	if err != nil {
		if n.o.ttl > 0 && isUnimplemented(err) {
			return registration{}, fmt.Errorf("%w: %w", ErrTTLUnsupported, err)
		}
		return registration{}, err
	}
	return registration{path: p, czxid: st.Czxid, owner: st.EphemeralOwner}, nil
}

// isUnimplemented reports the server's UNIMPLEMENTED (-6), its answer to a
// TTL create without extended types. go-zookeeper has no sentinel for it:
// its error is the bare "unknown error: -6".
func isUnimplemented(err error) bool {
	return strings.Contains(err.Error(), "unknown error: -6")
}

// noteSessionLocked records the live session as one this Node creates in:
// a node of such a session, found later, is ours from a dead session
// (or, if the session is live, ours whose create reply was lost).
func (n *Node) noteSessionLocked() {
	if id := n.c.SessionID(); id != 0 {
		n.sessions[id] = true
	}
}

// found handles a node already at target, and watches it. Ours in the
// live session (a create whose reply was lost) is adopted; for persistent
// modes, which have no owner, any node is adopted and given our data, as
// Curator does. An ephemeral node of another session is never adopted:
// the Node waits for it to change (one of our dead sessions: the server
// is about to delete it; another process's, or this process's before a
// restart: the server deletes it when its session expires, if its
// process died) and then tries again (errAgain), unless before Start
// returns, FailIfOwned fails with ErrOwnedByOtherSession and TakeOver
// deletes it (wctx carries that delete, which must not land after a
// create of ours).
func (n *Node) found(ctx, wctx context.Context, target string, started bool) (registration, watched, error) {
	w, err := n.look(wctx, target)
	if isNoNode(err) {
		return registration{}, watched{}, errAgain
	}
	if err != nil {
		return registration{}, watched{}, err
	}
	st := w.stat
	reg := registration{path: target, czxid: st.Czxid, owner: st.EphemeralOwner}
	if !n.o.mode.IsEphemeral() {
		n.adopt(reg, st.Version)
		return reg, w, nil
	}
	live := n.c.SessionID()
	if st.EphemeralOwner != 0 && st.EphemeralOwner == live && n.c.SessionAlive(live) {
		n.adopt(reg, st.Version)
		return reg, w, nil
	}
	n.mu.Lock()
	ours := n.sessions[st.EphemeralOwner]
	n.mu.Unlock()
	owner := zap.String("owner", fmt.Sprintf("0x%x", st.EphemeralOwner))
	reason := ErrSessionLost
	if ours {
		n.log.Info("node: path held by our dead session's node; waiting for it to go", owner)
	} else {
		reason = fmt.Errorf("%w (0x%x)", ErrOwnedByOtherSession, st.EphemeralOwner)
		switch {
		case !started && n.o.failIfOwned:
			n.giveBack(wctx, target, w)
			return registration{}, watched{}, reason
		case !started && n.o.takeOver:
			return registration{}, watched{}, n.takeOver(wctx, target, st)
		}
		n.log.Warn("node: path held by the ephemeral node of another session; waiting for it to go "+
			"(if its process died, the server deletes it when its session expires: about that session's timeout)",
			owner, zap.Duration("expected_wait", n.c.SessionTimeout()), zap.Bool("started", started))
		n.mu.Lock()
		n.waitOwner = st.EphemeralOwner
		n.mu.Unlock()
		defer func() {
			n.mu.Lock()
			n.waitOwner = 0
			n.mu.Unlock()
		}()
	}
	n.setStatus(Event{State: n.lostState(started), Path: n.Path(), Reason: reason})
	// Any change (its deletion, a write, a reconnection's look-again, the
	// session's end) sends the loop to create again, which finds the node
	// again if it is still there.
	select {
	case <-ctx.Done():
		n.giveBack(wctx, target, w)
		return registration{}, watched{}, ctx.Err()
	case <-w.ch:
		return registration{}, watched{}, errAgain
	}
}

// takeOver deletes the node of another session at target (TakeOver), at
// the version found, so that a node changed meanwhile is looked at again;
// the loop then makes ours.
func (n *Node) takeOver(ctx context.Context, target string, st *zk.Stat) error {
	n.log.Warn("node: taking over the ephemeral node of another session (TakeOver)",
		zap.String("owner", fmt.Sprintf("0x%x", st.EphemeralOwner)))
	err := n.c.Delete(ctx, target, framework.WithVersion(st.Version))
	if err != nil && !isNoNode(err) && !errors.Is(err, zk.ErrBadVersion) {
		return err
	}
	return errAgain
}

// adopt takes a found node as ours; its data is rewritten by pushData.
func (n *Node) adopt(reg registration, version int32) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.czxids[reg.czxid] = true
	n.version, n.dirty = version, true // its data is not known to be ours
}

// registered records and reports reg as our registered node.
func (n *Node) registered(reg registration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.reg = reg
	n.setStatusLocked(Event{State: Registered, Path: reg.path, Session: reg.owner, Czxid: reg.czxid})
	n.log.Info("node: registered", zap.String("node", reg.path), zap.String("session", fmt.Sprintf("0x%x", reg.owner)))
}

// unregister forgets the registered node: it is lost.
func (n *Node) unregister() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.reg = registration{}
}

// hold waits until our node is lost, and returns why: the session that
// owns it ended, it was deleted, or it was replaced. w watches it: a write
// (SetData's, or another client's) fires it too, and the node is looked
// at and watched again. A TTL node's touch child is touched every ttl/2
// meanwhile. When ctx ends (Close), hold leaves in n.known what it knows
// of the node for remove.
func (n *Node) hold(ctx context.Context, w watched, reg registration) error {
	var sessDone <-chan struct{}
	if n.o.mode.IsEphemeral() {
		s := n.c.Session()
		if s.ID() != reg.owner {
			return ErrSessionLost
		}
		sessDone = s.Done()
	}
	// A look again is waited for (see look), but ends with the session,
	// not at the end of the retry policy's patience. Its context and the
	// goroutine that ends it are made only when one is needed: most
	// holds end with no look.
	rearm := func() (watched, error) {
		rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		defer cancel()
		if sessDone != nil {
			looked := make(chan struct{})
			defer close(looked)
			go func() {
				select {
				case <-sessDone:
					cancel()
				case <-looked:
				}
			}()
		}
		return n.arm(rctx, reg)
	}
	var (
		tick  chan struct{}
		timer clock.Timer
	)
	arm := func() {
		timer = n.o.clock.AfterFunc(n.o.ttl/2, func() {
			select {
			case tick <- struct{}{}:
			default:
			}
		})
	}
	if n.o.ttl > 0 {
		tick = make(chan struct{}, 1)
		arm()
	}
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	lost := func() error {
		if n.o.mode.IsEphemeral() && !n.c.SessionAlive(reg.owner) {
			return ErrSessionLost
		}
		return ErrNodeDeleted
	}
	for {
		select {
		case <-sessDone:
			return ErrSessionLost
		case <-ctx.Done():
			if sessDone != nil && !n.c.SessionAlive(reg.owner) {
				return ErrSessionLost
			}
			n.leave(reg, w)
			return ctx.Err()
		case <-tick:
			n.touch(ctx, reg.path)
			arm()
		case ev := <-w.ch:
			if ev.Type == zk.EventNodeDeleted {
				return lost()
			}
			// A write, a look-again after a reconnection, or the end
			// of the watch (EventNotWatching: the session ended, or
			// the client is closing): look again.
			if sessDone != nil && !n.c.SessionAlive(reg.owner) {
				return ErrSessionLost
			}
			nw, err := rearm()
			switch {
			case errors.Is(err, errAgain):
				return lost()
			case err != nil:
				if sessDone != nil && !n.c.SessionAlive(reg.owner) {
					return ErrSessionLost
				}
				// Retries ran out (a long partition), or the client
				// closed: look again by creating, which finds our
				// node if it is there.
				return err
			}
			w = nw
		}
	}
}

// nonSequential is m without its sequence number: the mode of a node made
// again under the name the first create got.
func nonSequential(m framework.Mode) framework.Mode {
	switch m {
	case framework.PersistentSequential:
		return framework.Persistent
	case framework.EphemeralSequential:
		return framework.Ephemeral
	case framework.PersistentSequentialWithTTL:
		return framework.PersistentWithTTL
	}
	return m
}
