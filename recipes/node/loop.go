package node

import (
	"context"
	"errors"
	"fmt"
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

// loop keeps our node: create, hold until it is lost, create again. Every
// wait is on one framework.Watch of the node's path.
func (n *Node) loop(ctx context.Context, r *run) {
	defer close(r.done)
	var w watch
	defer w.close()
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
		if !first || n.plain() {
			if err := w.set(ctx, n.c, target); err != nil {
				if fail(err) {
					return
				}
				continue
			}
		}
		reg, err := n.create(wctx, target, first)
		if ctx.Err() != nil {
			// Stopped while creating: a node made is deleted by stop,
			// never reported as registered.
			return
		}
		if errors.Is(err, zk.ErrNodeExists) {
			reg, err = n.found(ctx, wctx, w.w, target, started)
		}
		if errors.Is(err, errAgain) {
			continue
		}
		if err == nil && w.path != reg.path {
			// The path was not known before the create: watch it now,
			// and check that the node did not go before the watch.
			if err = w.set(ctx, n.c, reg.path); err == nil {
				var st *zk.Stat
				if st, err = n.c.Exists(ctx, reg.path); err == nil && (st == nil || st.Czxid != reg.czxid) {
					continue
				}
			}
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
		reason := n.hold(ctx, w.w, reg)
		n.unregister()
		if ctx.Err() != nil || errors.Is(reason, framework.ErrClosed) {
			return
		}
		n.log.Info("node: lost; making it again", zap.String("node", reg.path), zap.Error(reason))
		n.setStatus(Event{State: Recreating, Path: reg.path, Reason: reason})
	}
}

// watch is the loop's Watcher and the path it watches.
type watch struct {
	w    *framework.Watcher
	path string
}

// set makes w watch path, keeping its Watcher if it watches path already
// and still runs.
func (w *watch) set(ctx context.Context, c *framework.Client, path string) error {
	if w.w != nil {
		select {
		case <-w.w.Done():
		default:
			if w.path == path {
				return nil
			}
		}
		w.close()
	}
	nw, err := c.Watch(ctx, path)
	if err != nil {
		return err
	}
	w.w, w.path = nw, path
	return nil
}

func (w *watch) close() {
	if w.w != nil {
		_ = w.w.Close()
	}
	w.w, w.path = nil, ""
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

// found handles a node already at target. Ours in the live session (a
// create whose reply was lost) is adopted; for persistent modes, which have
// no owner, any node is adopted and given our data, as Curator does. An
// ephemeral node of another session is never adopted: the Node waits for
// it to go (one of our dead sessions: the server is about to delete it;
// another process's, or this process's before a restart: the server
// deletes it when its session expires, if its process died), unless
// before Start returns, FailIfOwned fails with ErrOwnedByOtherSession and
// TakeOver deletes it (wctx carries that delete, which must not land
// after a create of ours).
func (n *Node) found(ctx, wctx context.Context, w *framework.Watcher, target string, started bool) (registration, error) {
	st, err := n.c.Exists(ctx, target)
	if err != nil {
		return registration{}, err
	}
	if st == nil {
		return registration{}, errAgain
	}
	reg := registration{path: target, czxid: st.Czxid, owner: st.EphemeralOwner}
	if !n.o.mode.IsEphemeral() {
		n.adopt(reg, st.Version)
		return reg, nil
	}
	live := n.c.SessionID()
	if st.EphemeralOwner != 0 && st.EphemeralOwner == live && n.c.SessionAlive(live) {
		n.adopt(reg, st.Version)
		return reg, nil
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
			return registration{}, reason
		case !started && n.o.takeOver:
			return n.takeOver(wctx, target, st)
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
	if err := n.waitGone(ctx, w, target, st.Czxid); err != nil {
		return registration{}, err
	}
	return registration{}, errAgain
}

// takeOver deletes the node of another session at target (TakeOver), at
// the version found, so that a node changed meanwhile is looked at again;
// the loop then makes ours.
func (n *Node) takeOver(ctx context.Context, target string, st *zk.Stat) (registration, error) {
	n.log.Warn("node: taking over the ephemeral node of another session (TakeOver)",
		zap.String("owner", fmt.Sprintf("0x%x", st.EphemeralOwner)))
	err := n.c.Delete(ctx, target, framework.WithVersion(st.Version))
	if err != nil && !isNoNode(err) && !errors.Is(err, zk.ErrBadVersion) {
		return registration{}, err
	}
	return registration{}, errAgain
}

// adopt takes a found node as ours; its data is rewritten by pushData.
func (n *Node) adopt(reg registration, version int32) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.czxids[reg.czxid] = true
	n.version, n.dirty = version, true // its data is not known to be ours
}

// waitGone waits, on w, until the node at path with czxid is gone (deleted,
// or replaced by another incarnation).
func (n *Node) waitGone(ctx context.Context, w *framework.Watcher, path string, czxid int64) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-w.Events():
			if !ok {
				return watchEnded(w)
			}
			switch ev.Type {
			case framework.WatchDeleted:
				if ev.Path == path {
					return nil
				}
			case framework.WatchCreated, framework.WatchResync:
				st, err := n.c.Exists(ctx, path)
				if err != nil {
					return err
				}
				if st == nil || st.Czxid != czxid {
					return nil
				}
			}
		}
	}
}

// watchEnded is the error of a Watcher whose channel closed.
func watchEnded(w *framework.Watcher) error {
	if err := w.Err(); err != nil {
		return err
	}
	return framework.ErrClosed
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
// owns it ended, it was deleted, or it was replaced. A TTL node's touch
// child is touched every ttl/2 meanwhile.
func (n *Node) hold(ctx context.Context, w *framework.Watcher, reg registration) error {
	var sessDone <-chan struct{}
	if n.o.mode.IsEphemeral() {
		s := n.c.Session()
		if s.ID() != reg.owner {
			return ErrSessionLost
		}
		sessDone = s.Done()
		// The reads below end with the session, not at the end of the
		// retry policy's patience.
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-sessDone:
				cancel()
			case <-ctx.Done():
			}
		}()
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
			return ctx.Err()
		case <-tick:
			n.touch(ctx, reg.path)
			arm()
		case ev, ok := <-w.Events():
			if !ok {
				return watchEnded(w)
			}
			switch ev.Type {
			case framework.WatchDeleted:
				if ev.Path == reg.path {
					return lost()
				}
			case framework.WatchCreated, framework.WatchResync:
				if ev.Type == framework.WatchCreated && !ev.Coalesced {
					// Our own create (the watch was set before it): a
					// later incarnation would follow a WatchDeleted.
					continue
				}
				if sessDone != nil && !n.c.SessionAlive(reg.owner) {
					return ErrSessionLost
				}
				st, err := n.c.Exists(ctx, reg.path)
				if err != nil {
					if sessDone != nil && !n.c.SessionAlive(reg.owner) {
						return ErrSessionLost
					}
					// Retries ran out (a long partition): look again by
					// creating, which finds our node if it is there.
					return err
				}
				if st == nil || st.Czxid != reg.czxid {
					return lost()
				}
			}
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
