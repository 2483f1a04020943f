package node

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/retry"
)

// pushData writes the latest data on the registered node, if it does not
// carry it yet. Writes are serialised (the push token) and each reads the
// data when it starts, so the last write carries the last SetData's data.
// A write is versioned, with a version read from our incarnation of the
// node, so it never changes a node another session made.
func (n *Node) pushData(ctx context.Context) error {
	select {
	case n.push <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-n.push }()
	for {
		n.mu.Lock()
		reg, data, gen, version := n.reg, n.data, n.gen, n.version
		current := n.pushed == gen && !n.dirty
		n.mu.Unlock()
		if reg.path == "" || current {
			return nil
		}
		st, err := n.c.Set(ctx, reg.path, data, version)
		switch {
		case err == nil:
			n.mu.Lock()
			if n.reg.czxid == reg.czxid {
				n.version, n.pushed, n.dirty = st.Version, gen, false
			}
			n.fits, n.fitsGen = data, gen
			n.mu.Unlock()
		case errors.Is(err, framework.ErrDataTooLarge):
			n.refused(gen, err)
			return err
		case errors.Is(err, zk.ErrBadVersion):
			// Someone else wrote it: read our incarnation's version.
			st, err := n.c.Exists(ctx, reg.path)
			if err != nil {
				return err
			}
			if st == nil || st.Czxid != reg.czxid {
				return nil // lost: the loop makes it again, with the data
			}
			n.mu.Lock()
			if n.reg.czxid == reg.czxid {
				n.version = st.Version
			}
			n.mu.Unlock()
		case isNoNode(err):
			return nil // lost: the loop makes it again, with the data
		default:
			return err
		}
	}
}

// refused drops the data of gen, refused for its size, if it is still the
// latest: the Node's data falls back to the last that fitted, so that the
// node can be made again. It reports whether the data to write has
// changed since gen (false: the data that fitted is refused too, and the
// caller reports the error).
func (n *Node) refused(gen uint64, err error) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.gen != gen {
		return true // a newer SetData, or a fall-back already
	}
	if n.fitsGen == gen {
		return false
	}
	n.log.Warn("node: data refused for its size; keeping the last data that fitted",
		zap.Int("refused_bytes", len(n.data)), zap.Int("kept_bytes", len(n.fits)), zap.Error(err))
	// A new generation whose data is fits: a node that carries fits (all
	// there is after a write, whose success sets pushed with fitsGen) is
	// not written again.
	n.gen++
	n.data = n.fits
	if n.pushed == n.fitsGen {
		n.pushed = n.gen
	}
	n.fitsGen = n.gen
	return true
}

// touch sets the TTL node's touch child, making it if missing (Curator's
// PersistentTtlNode touch task). Failures are left to the next touch.
func (n *Node) touch(ctx context.Context, path string) {
	child := framework.JoinPath(path, touchName)
	_, err := n.c.Set(ctx, child, []byte{}, -1)
	if isNoNode(err) {
		// Not cancelled with ctx: a touch child made after stop deleted
		// the node's children would keep the node (see loop's wctx).
		_, err = n.c.Create(context.WithoutCancel(ctx), child, []byte{}, framework.WithMode(framework.PersistentWithTTL), framework.WithTTL(n.o.ttl))
		if errors.Is(err, zk.ErrNodeExists) {
			_, err = n.c.Set(ctx, child, []byte{}, -1)
		}
	}
	if err != nil && ctx.Err() == nil {
		n.log.Debug("node: touch failed", zap.Error(err))
	}
}

// remove deletes the node this Node made, once its loop has ended: the
// registered one, or one a create may have made just as the loop was
// stopped. It checks the owner (ephemeral) or the incarnation (persistent)
// first, so it never deletes a node of another session. A TTL node is
// deleted with its touch child, the child first; with ExpireAfterClose it
// is left for the server to reap unless failed (a Start that failed leaves
// nothing).
func (n *Node) remove(ctx context.Context, failed bool) error {
	n.mu.Lock()
	path := n.actual
	if path == "" && n.plain() {
		path = n.path
	}
	k := n.known
	n.known = known{}
	n.mu.Unlock()
	if k.reg.path != "" {
		// Our node may be left (ExpireAfterClose, not ours any more,
		// its delete gone to the background): its watch must not stay.
		defer n.giveBack(ctx, k.reg.path, k.w)
	}
	if n.o.expireAfterClose && !failed {
		return nil
	}
	if path == "" {
		return nil // nothing made (a protected create cleans up after itself)
	}
	if n.removeKnown(ctx, path, k) {
		return nil
	}
	if err := n.removeOnce(ctx, path); err != nil {
		return n.removeLater(path, err)
	}
	return nil
}

// known is what the loop left for remove when it ended holding our node:
// reg, at version, its watch quiet (see leave). Zero when nothing is
// known.
type known struct {
	reg     registration
	w       watched // the loop's last watch on reg, given back by remove if it has not fired
	quiet   bool    // w heard of nothing: reg at version is ours
	version int32
}

// leave records, as the loop ends holding reg, watched by w, that the node
// is known to be ours if w has heard of no change since the read that set
// it and the connection has stayed up since (watched.quiet).
func (n *Node) leave(reg registration, w watched) {
	k := known{reg: reg, w: w}
	if w.quiet() {
		k.version, k.quiet = w.stat.Version, true
	}
	n.mu.Lock()
	n.known = k
	n.mu.Unlock()
}

// removeKnown deletes our node with one request, at the version the loop
// last saw, when the loop left it known (k), and reports whether it is
// gone; false sends remove to the owner's read first (removeOnce): nothing
// known (a reconnection or a change since the watch was set, a TTL node, a
// node made as the loop was stopped), the session that owns it not the
// live one, or the delete refused (the node written since) or failed.
//
// Why the read of the owner can be left out. The read closed this window:
// between the moment the server has the node as ours and the moment it
// applies our delete, someone deletes our node and another session makes
// it again, at version 0; an unconditional delete would then take theirs.
// With the read, that moment is when the server answered the exists: the
// window is the exists reply's way back, our turn, and the delete's way
// there. The watch gives the same moment or a later one: ZooKeeper sends a
// session's watch events as it makes the change, in one stream with its
// replies, and go-zookeeper puts each in the watch's channel as it reads
// the frame (watched), so a quiet channel says the node was ours when the
// server sent the last frame this client has read; a deletion made before
// that frame would have been read before it. So the window is the same
// way back and way there, without the turn between the exists' reply and
// the delete. What the watch cannot tell is a change made during a
// connection cut (the server reports it after the reconnection): any
// state change since the watch was set makes the Node read the owner, as
// before. The delete is sent at our version (a node written since is
// looked at first), only in the session that owns the node and alive by
// the clock (SessionAlive), and never retried past that session's end,
// where the path may be another's: the owner read would have found the
// session gone too. An ephemeral node of the live session can be deleted
// by nobody but a client's delete: its session's expiry ends the session
// the delete rides in.
func (n *Node) removeKnown(ctx context.Context, path string, k known) bool {
	if !k.quiet || k.reg.path != path || n.o.ttl > 0 {
		return false
	}
	if n.o.mode.IsEphemeral() {
		s := n.c.Session()
		if s.ID() != k.reg.owner || !n.c.SessionAlive(k.reg.owner) {
			return false
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-s.Done():
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	err := n.c.Delete(ctx, path, framework.WithVersion(k.version), framework.Quietly())
	return err == nil
}

// removeOnce deletes the node at path if it is ours (mine): a TTL node's
// touch child first, and the node at the version just read. A node missing
// or not ours is nil: nothing of ours to delete.
func (n *Node) removeOnce(ctx context.Context, path string) error {
	for tries := 0; ; tries++ {
		st, err := n.c.Exists(ctx, path)
		if err != nil {
			return err
		}
		if st == nil || !n.mine(st) {
			return nil
		}
		if n.o.ttl > 0 {
			// The touch child first: a node goes only once childless.
			// Only ours: any other child is left, and so is the node.
			err := n.c.Delete(ctx, framework.JoinPath(path, touchName), framework.Quietly())
			if err != nil {
				return err
			}
		}
		err = n.c.Delete(ctx, path, framework.WithVersion(st.Version), framework.Quietly())
		switch {
		case err == nil:
			return nil
		case errors.Is(err, zk.ErrBadVersion):
			continue // written meanwhile: look again
		case errors.Is(err, zk.ErrNotEmpty) && n.o.ttl > 0 && tries < notEmptyTries:
			// A child appeared after we deleted the touch child: the
			// touch child made again meanwhile (the loop waits for its
			// own touch, so by another client's Node on this path, say).
			// Delete it again, a few times; past that, it is not ours.
			continue
		default:
			return err
		}
	}
}

// mendable reports an error that a later delete may not meet: a
// connection problem, or the end of the caller's ctx.
func mendable(err error) bool {
	return retry.IsRetryable(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// notEmptyTries bounds remove's deletes of a TTL node that still has
// children: past it, the children are not ours.
const notEmptyTries = 3

// mine reports whether the node with st is ours: for an ephemeral node,
// owned by the live session (one this Node created in); for a persistent
// one, an incarnation this Node made or adopted.
func (n *Node) mine(st *zk.Stat) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.o.mode.IsEphemeral() {
		return n.sessions[st.EphemeralOwner] && n.c.SessionAlive(st.EphemeralOwner)
	}
	return n.czxids[st.Czxid]
}

// removeLater goes on deleting our node in the background after a failed
// delete (the connection down, ctx ended), and returns err. An ephemeral
// node's delete goes on while the session that owns it lives: once the
// session ends, so does the node. A persistent (or TTL) node's goes on
// until it is done or the client closes, checking each time that the node
// at the path is still ours.
func (n *Node) removeLater(path string, err error) error {
	if errors.Is(err, framework.ErrClosed) {
		if n.o.mode.IsEphemeral() {
			return nil // the client closed: its session, and our node, ended
		}
		return err
	}
	if !mendable(err) {
		return err // no permission, a child not ours, ...: retrying will not mend it
	}
	ctx, cancel := context.WithCancel(context.Background())
	end := n.c.Done() // Pause also ends with the client
	if n.o.mode.IsEphemeral() {
		s := n.c.Session()
		n.mu.Lock()
		ours := n.sessions[s.ID()]
		n.mu.Unlock()
		if !ours {
			cancel()
			return err // our sessions have ended, and our nodes with them
		}
		end = s.Done()
	}
	// Close waits for this delete too (awaitCleaning): a Start that
	// failed leaves it running, and a Close after it must not return nil
	// while our node may still be there.
	done := make(chan struct{})
	n.mu.Lock()
	n.cleaning = done
	n.mu.Unlock()
	go func() {
		defer close(done)
		defer cancel()
		go func() {
			select {
			case <-end:
				cancel()
			case <-ctx.Done():
			}
		}()
		pause := pauseMin
		for {
			err := n.removeOnce(ctx, path)
			if err == nil || ctx.Err() != nil || errors.Is(err, framework.ErrClosed) || !mendable(err) {
				// Done, or the node went with its session or client;
				// an error retrying cannot mend is Close's to report.
				if err != nil && !mendable(err) && !errors.Is(err, framework.ErrClosed) {
					n.setCleanErr(done, err)
				} else {
					n.setCleanErr(done, nil)
				}
				return
			}
			n.log.Debug("node: delete will retry", zap.Error(err))
			if n.c.Pause(ctx, pause) != nil {
				return
			}
			pause = min(2*pause, pauseMax)
		}
	}()
	return fmt.Errorf("%w (the delete goes on in the background)", err)
}
