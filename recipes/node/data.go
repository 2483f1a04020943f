package node

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/gocurator/curator/framework"
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
			n.mu.Unlock()
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

// touch sets the TTL node's touch child, making it if missing (Curator's
// PersistentTtlNode touch task). Failures are left to the next touch.
func (n *Node) touch(ctx context.Context, path string) {
	child := framework.JoinPath(path, touchName)
	_, err := n.c.Set(ctx, child, []byte{}, -1)
	if isNoNode(err) {
		_, err = n.c.Create(ctx, child, []byte{}, framework.WithMode(framework.PersistentWithTTL), framework.WithTTL(n.o.ttl))
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
	if n.o.expireAfterClose && !failed {
		return nil
	}
	n.mu.Lock()
	path := n.actual
	if path == "" && n.plain() {
		path = n.path
	}
	n.mu.Unlock()
	if path == "" {
		return nil // nothing made (a protected create cleans up after itself)
	}
	for tries := 0; ; tries++ {
		st, err := n.c.Exists(ctx, path)
		if err != nil {
			return n.removeLater(path, err)
		}
		if st == nil || !n.mine(st) {
			return nil
		}
		if n.o.ttl > 0 {
			// The touch child first: a node goes only once childless.
			// Only ours: any other child is left, and so is the node.
			err := n.c.Delete(ctx, framework.JoinPath(path, touchName), framework.Quietly())
			if err != nil {
				return n.removeLater(path, err)
			}
		}
		opts := []framework.DeleteOption{framework.WithVersion(st.Version), framework.Quietly()}
		if !n.o.mode.IsEphemeral() {
			opts = append(opts, framework.Guaranteed())
		}
		err = n.c.Delete(ctx, path, opts...)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, zk.ErrBadVersion):
			continue // written meanwhile: look again
		case errors.Is(err, zk.ErrNotEmpty) && n.o.ttl > 0 && tries < notEmptyTries:
			// A touch abandoned as the loop stopped may have made the
			// child again after our delete: delete it again.
			continue
		default:
			return n.removeLater(path, err)
		}
	}
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

// removeLater goes on deleting our ephemeral node in the background after
// a failed delete (the connection down, ctx ended), while the session
// that owns it lives: once the session ends, so does the node. A
// persistent node's delete is the framework's guaranteed delete, which
// goes on by itself. It returns err.
func (n *Node) removeLater(path string, err error) error {
	if n.o.mode.IsEphemeral() && errors.Is(err, framework.ErrClosed) {
		return nil // the client closed: its session, and our node, ended
	}
	if !n.o.mode.IsEphemeral() || errors.Is(err, framework.ErrClosed) {
		return err
	}
	s := n.c.Session()
	n.mu.Lock()
	ours := n.sessions[s.ID()]
	n.mu.Unlock()
	if !ours {
		return err // our sessions have ended, and our nodes with them
	}
	go func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-s.Done():
				cancel()
			case <-ctx.Done():
			}
		}()
		pause := pauseMin
		for {
			st, err := n.c.Exists(ctx, path)
			if err == nil {
				if st == nil || st.EphemeralOwner != s.ID() {
					return
				}
				err = n.c.Delete(ctx, path, framework.WithVersion(st.Version), framework.Quietly())
				if err == nil {
					return
				}
			}
			if ctx.Err() != nil || errors.Is(err, framework.ErrClosed) {
				return
			}
			n.log.Debug("node: delete will retry", zap.Error(err))
			if n.c.Pause(ctx, pause) != nil {
				return
			}
			pause = min(2*pause, pauseMax)
		}
	}()
	return fmt.Errorf("%w (the delete goes on in the background while the session lives)", err)
}
