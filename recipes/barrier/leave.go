package barrier

import (
	"context"
	"errors"
	"slices"

	"github.com/go-zookeeper/zk"
	"golang.org/x/sync/errgroup"

	"github.com/gocurator/curator/framework"
)

// Leave leaves the barrier and blocks until every member of its round
// (those the ready node that let it in opened) has left, or ctx ends: the
// lowest waits for the others, the others delete their node and wait for
// the lowest, as in Curator; but every wake-up is followed by a fresh look,
// so a reconnection or a new session never lets a member out while one of
// its round is still in (Curator's leave returns then), and a member of
// the next round, made after our round's ready node, is not waited for.
// When ctx ends it returns ctx's error at once, never spinning, and our
// node is deleted all the same: this member has left, and the members
// waiting for it are not held up. The last member of the round to go
// deletes the round's ready node with its own. ErrNotEntered without a
// successful Enter. If the membership was lost meanwhile (see Done), Leave
// still waits for the others and then returns an error wrapping
// ErrMemberLost.
func (d *Double) Leave(ctx context.Context) error {
	if d == nil {
		return ErrNilHandle
	}
	if err := d.begin(ctx); err != nil {
		return d.wrap("leave", err)
	}
	defer func() { <-d.turn }()
	if !d.entered {
		return d.wrap("leave", ErrNotEntered)
	}
	d.entered = false
	lost := d.release()
	if err := d.leave(ctx); err != nil {
		d.cleanUp(ctx)
		return d.wrap("leave", err)
	}
	if lost != nil {
		return d.wrap("leave", lost)
	}
	return nil
}

func (d *Double) leave(ctx context.Context) error {
	// Every pass looks again: a wake-up (the target's deletion, a
	// reconnection, a new session) only says "look", and returning on one
	// let a member out while the lowest had not left (GH-1290's pattern).
	for {
		r, err := d.leaveLook(ctx)
		if err != nil {
			return err
		}
		in := d.inRound(r)
		ours := slices.Contains(in, d.name)
		switch {
		case len(in) == 0:
			return d.closeRound(ctx, r)
		case ours && len(in) == 1:
			// The last of the round.
			done, err := d.goLast(ctx, r)
			if done || err != nil {
				return err
			}
		case ours && in[0] == d.name:
			err = d.waitGone(ctx, in[len(in)-1], false) // the lowest waits for the highest
		default:
			err = d.waitGone(ctx, in[0], ours) // the others go, and wait for the lowest
		}
		if err != nil {
			return err
		}
	}
}

// leaveLook lists the barrier and reads, beside the listing (one round
// trip), the Stats of the members Enter saw but could not place in or out
// of our round; members the listing shows that nobody has placed yet (they
// came since) are read after it, which is rare: a member of the next round
// entering early.
func (d *Double) leaveLook(ctx context.Context) (round, error) {
	ask := d.roster.unknown
	d.roster.unknown = nil
	stats, wait := d.stats(ctx, ask)
	r, err := d.list(ctx)
	if err = errors.Join(err, wait()); err != nil {
		d.roster.unknown = ask
		return r, err
	}
	for i, m := range ask {
		d.place(m, stats[i])
	}
	var fresh []string
	for _, m := range r.members {
		if _, ok := d.roster.czxid[m]; !ok {
			fresh = append(fresh, m)
		}
	}
	if len(fresh) == 0 {
		return r, nil
	}
	stats, wait = d.stats(ctx, fresh)
	if err := wait(); err != nil {
		return r, err
	}
	for i, m := range fresh {
		d.place(m, stats[i])
	}
	return r, nil
}

// stats reads the Stats of the member nodes names, side by side; wait
// returns once all are in.
func (d *Double) stats(ctx context.Context, names []string) ([]*zk.Stat, func() error) {
	stats := make([]*zk.Stat, len(names))
	var g errgroup.Group
	for i, m := range names {
		g.Go(func() (err error) {
			stats[i], err = d.c.Exists(ctx, framework.JoinPath(d.path, m))
			return err
		})
	}
	return stats, g.Wait
}

// place records a member node's Stat in the roster: made before the ready
// node that let us in or not. A node gone is left unplaced: if the name
// shows up again, it is read again.
func (d *Double) place(name string, st *zk.Stat) {
	if st != nil {
		d.roster.czxid[name] = st.Czxid
	}
}

// inRound returns the members in r that belong to our round, sorted by
// name: made before the ready node that let us in. A member of the next
// round was made after it and is neither waited for nor counted as ours.
func (d *Double) inRound(r round) []string {
	var in []string
	for _, m := range r.members {
		if d.roster.of(m, d.opened) {
			in = append(in, m)
		}
	}
	return in
}

// opening reports whether the barrier node's Stat st says that no round
// has opened since ours: every opening rewrites the barrier node's data in
// the transaction that makes its ready node, so its mzxid is our ready
// node's czxid. A transaction that checks st's version then knows that the
// ready node, if any, is ours, without reading it. (A ready node made by a
// Curator member, or data written by someone else, fails this test; the
// ready node is then read.)
func (d *Double) opening(st *zk.Stat) bool { return st != nil && st.Mzxid == d.opened }

// goLast leaves as the last member of the round, found so by the look r:
// it deletes our node and, in the same transaction, the round's ready node
// if r shows one and no round opened since ours. done says that nothing
// is left to do; otherwise the caller looks again (and closes the round).
func (d *Double) goLast(ctx context.Context, r round) (done bool, err error) {
	if r.hasReady && d.opening(r.pstat) {
		_, err := d.c.Multi(ctx, framework.CheckOp(d.path, r.pstat.Version),
			framework.DeleteOp(d.readyPath(), -1), framework.DeleteOp(d.node, -1))
		if err == nil {
			return true, nil
		}
		if !refused(err) {
			return false, err
		}
	}
	if err := d.c.Delete(ctx, d.node, framework.Quietly()); err != nil {
		return false, err
	}
	// Nobody of the round is left; a ready node the listing did not show
	// is not ours (ours cannot come back).
	return !r.hasReady, nil
}

// closeRound deletes the ready node that opened our round once every
// member has left, if no round was opened since the look r (the
// transaction checks the barrier node's version, which every opening
// moves): the next round's ready node is never taken. A ready node made
// since ours by a member that found ours stale while members of ours were
// still in (it counted them) is deleted too once no member older than it
// is left: its round is over as well, and nobody else would delete it. A
// refusal means another member deleted it or a new round replaced it.
func (d *Double) closeRound(ctx context.Context, r round) error {
	if !r.hasReady {
		return nil
	}
	ready := d.readyPath()
	version := int32(-1) // the ready node is ours if the version check passes
	if !d.opening(r.pstat) {
		st, err := d.c.Exists(ctx, ready) // after the listing: see look
		if err != nil {
			return err
		}
		if st == nil || st.Czxid < d.opened || (st.Czxid > d.opened && !d.over(r, st.Czxid)) {
			return nil
		}
		version = st.Version
	}
	_, err := d.c.Multi(ctx, framework.CheckOp(d.path, r.pstat.Version), framework.DeleteOp(ready, version))
	if err != nil && !refused(err) {
		return err
	}
	return nil
}

// over reports whether the round of the ready node made at zxid is over by
// the listing r: every member listed is known to be younger.
func (d *Double) over(r round, zxid int64) bool {
	for _, m := range r.members {
		if c, ok := d.roster.czxid[m]; !ok || c < zxid {
			return false
		}
	}
	return true
}

// refused reports whether a transaction failed on one of its conditions.
func refused(err error) bool {
	return errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNodeExists)
}

// waitGone waits, with a watch of that node alone, until member m's node
// is deleted, or is found not to be of our round (made again since), or
// an event says to look again: the caller looks again in every case. With
// del it deletes our node beside setting the watch (one round trip).
func (d *Double) waitGone(ctx context.Context, m string, del bool) error {
	p := framework.JoinPath(d.path, m)
	var g errgroup.Group
	if del {
		g.Go(func() error { return d.c.Delete(ctx, d.node, framework.Quietly()) })
	}
	// A data watch: set only if the node exists (an exists watch on a
	// node gone already would stay on the server).
	changed := d.c.StateChanged()
	_, stat, ch, err := d.c.GetW(ctx, p)
	derr := g.Wait()
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return derr
	case err != nil:
		return err
	case derr != nil:
		d.unwatch(ctx, p, framework.DataWatch)
		return derr
	case stat.Czxid >= d.opened:
		// Not the node the roster placed in our round.
		d.roster.czxid[m] = stat.Czxid
		d.unwatch(ctx, p, framework.DataWatch)
		return nil
	}
	d.waits.Add(1)
	return d.wait(ctx, p, framework.DataWatch, ch, changed)
}
