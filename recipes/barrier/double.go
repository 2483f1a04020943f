package barrier

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/writegrace"
)

// readyNode is the name of the child that opens a round (Curator's).
const readyNode = "ready"

// Double is Curator's DistributedDoubleBarrier: members Enter and wait
// until n are present, compute, then Leave and wait until all have left.
// The handle is one member (its node's name is chosen when it is made, as
// Curator's is, and again at every later Enter, so that a late delete of
// an earlier node never takes a newer one); members in one process use a
// handle each. Enter and Leave
// of one handle run one at a time. A nil *Double returns ErrNilHandle.
type Double struct {
	c    *framework.Client
	path string
	n    int
	err  error
	log  *zap.Logger
	name string // our member node's name
	node string // and path

	turn chan struct{} // 1-buffered: held by the Enter or Leave in progress
	// Guarded by turn.
	entered bool
	czxid   int64 // of our node while entered
	owner   int64 // its session
	// opened is the czxid of the ready node that let us in: the members
	// of our round are those made before it (Leave waits for them alone).
	opened int64
	// used is set by the first Enter: every later one draws a new name,
	// so that a delete of an earlier node still on its way (in the
	// background after a connection loss) cannot take the new one.
	used bool

	member membership // Done and Err's state while entered

	wakeups atomic.Int64 // events that made a wait look again (tests)
	waits   atomic.Int64 // Leave's waits begun: watch set, target there (tests)
}

// NewDouble returns a member of the double barrier at path for n members.
// It does no I/O: a nil client, an invalid path or n < 1 is reported by
// every call.
func NewDouble(c *framework.Client, path string, n int) *Double {
	d := &Double{c: c, path: path, n: n, log: zap.NewNop(), turn: make(chan struct{}, 1)}
	d.err = validate(c, path)
	if d.err == nil && n < 1 {
		d.err = fmt.Errorf("%w: %d", ErrInvalidCount, n)
	}
	d.name = uuid.NewString()
	d.node = framework.JoinPath(path, d.name)
	if c != nil {
		d.log = c.Logger().Named("doublebarrier").With(zap.String("path", path))
	}
	return d
}

func (d *Double) wrap(op string, err error) error {
	return fmt.Errorf("double barrier %s: %s: %w", d.path, op, err)
}

func (d *Double) begin(ctx context.Context) error {
	if d.err != nil {
		return d.err
	}
	if ctx == nil {
		return fmt.Errorf("%w: nil context", framework.ErrInvalidOption)
	}
	select {
	case d.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// round is one look at the barrier.
type round struct {
	pstat   *zk.Stat // the barrier node's
	members []string // children but ready, sorted
	ours    bool     // our node is among them
	ready   *zk.Stat // nil: no ready node
	// stats has each member's Stat (nil: gone since the listing), read
	// by a look with members set.
	stats map[string]*zk.Stat
}

// look reads the barrier: its listing (with the barrier node's Stat),
// then, side by side, the ready node's Stat if it is listed and, with
// members, every member's. Two round trips, whatever the number of
// members: the reads after the listing are independent of each other.
func (d *Double) look(ctx context.Context, members bool) (round, error) {
	var r round
	kids, pstat, err := d.c.Children(ctx, d.path)
	if err != nil {
		if errors.Is(err, zk.ErrNoNode) {
			return r, nil
		}
		return r, err
	}
	r.pstat = pstat
	hasReady := false
	for _, k := range kids {
		switch k {
		case readyNode:
			hasReady = true
		case d.name:
			r.ours = true
			r.members = append(r.members, k)
		default:
			r.members = append(r.members, k)
		}
	}
	slices.Sort(r.members)
	var g errgroup.Group
	if hasReady {
		g.Go(func() (err error) {
			r.ready, err = d.c.Exists(ctx, framework.JoinPath(d.path, readyNode))
			return err
		})
	}
	var stats []*zk.Stat
	if members {
		stats = make([]*zk.Stat, len(r.members))
		for i, m := range r.members {
			g.Go(func() (err error) {
				stats[i], err = d.c.Exists(ctx, framework.JoinPath(d.path, m))
				return err
			})
		}
	}
	if err := g.Wait(); err != nil {
		return r, err
	}
	if members {
		r.stats = make(map[string]*zk.Stat, len(stats))
		for i, m := range r.members {
			r.stats[m] = stats[i]
		}
	}
	return r, nil
}

// data reads the barrier node's data for a transaction that rewrites it
// as it is (commit): none to read when r's Stat says it is empty.
func (d *Double) data(ctx context.Context, r round) ([]byte, error) {
	if r.pstat.DataLength == 0 {
		return []byte{}, nil
	}
	data, st, err := d.c.Get(ctx, d.path)
	if err == nil && st.Version != r.pstat.Version {
		err = zk.ErrBadVersion // changed since the look: look again
	}
	return data, err
}

// open reports whether r's ready node opens the barrier for us: it was made
// after our node (the round rule).
func (d *Double) open(r round) bool { return r.ready != nil && r.ready.Czxid > d.czxid }

// Enter joins the barrier and blocks until n members (this one included)
// are present, or ctx ends. It returns nil once the barrier is open for
// this member, also when that happened just as ctx ended, so that every
// member of a round agrees. On failure (ctx's error, ErrMemberLost, or
// another) it leaves no node: it has left the barrier, and no member
// counted it: a create of its member node in flight as ctx ends is waited
// for (up to a second) before the node is deleted, so that it cannot land
// after the delete. Enter while entered returns nil at once, or the error
// of a membership that was lost (Leave first).
func (d *Double) Enter(ctx context.Context) error {
	if d == nil {
		return ErrNilHandle
	}
	if err := d.begin(ctx); err != nil {
		return d.wrap("enter", err)
	}
	defer func() { <-d.turn }()
	if d.entered {
		if _, err := d.live(); err != nil {
			return d.wrap("enter", err) // lost: Leave first
		}
		return nil
	}
	if d.used {
		d.name = uuid.NewString()
		d.node = framework.JoinPath(d.path, d.name)
	}
	d.used = true
	if err := d.enter(ctx); err != nil {
		return d.wrap("enter", err)
	}
	d.entered = true
	d.start(d.owner, d.node)
	return nil
}

func (d *Double) enter(ctx context.Context) error {
	var st zk.Stat
	cctx, done := writegrace.Context(ctx)
	_, err := d.c.Create(cctx, d.node, nil, framework.WithMode(framework.Ephemeral),
		framework.CreatingParentContainers(), framework.StoringStatIn(&st))
	if err = done(err); err != nil {
		if !errors.Is(err, zk.ErrNodeExists) {
			d.cleanUp(ctx)
			return err
		}
		// Ours, made by a create whose reply was lost, or not ours at all.
		// Read on a clean-up context: ctx may have ended in the grace.
		sctx, cancel := d.c.CleanupContext(ctx)
		stat, serr := d.c.Exists(sctx, d.node)
		cancel()
		if serr != nil {
			// The name is this handle's own: whatever holds it is ours
			// (or went with an old session of ours), so delete it.
			d.cleanUp(ctx)
			return serr
		}
		if stat == nil || stat.EphemeralOwner != d.c.SessionID() {
			// The name is this Enter's own (a fresh UUID), so the node
			// was made by this create in a session that has ended since:
			// the create was applied, its reply lost with the session,
			// and the retry in the new session found it (or found it
			// going). The membership went with that session; its node
			// goes with it too, or now.
			d.cleanUp(ctx)
			return fmt.Errorf("%w: member node %s was made in a session that has ended: %w",
				ErrMemberLost, d.node, err)
		}
		st = *stat
	}
	d.czxid, d.owner = st.Czxid, st.EphemeralOwner
	for {
		r, err := d.look(ctx, false)
		if err != nil {
			return d.giveUp(ctx, err)
		}
		switch {
		case !r.ours:
			return ErrMemberLost
		case d.c.SessionID() != d.owner:
			// A new session: our node is the old one's, and goes with it
			// when the server expires it. Take it now, so that nobody
			// counts a member that is gone.
			d.cleanUp(ctx)
			return fmt.Errorf("%w: the session of member node %s ended", ErrMemberLost, d.node)
		case d.open(r):
			d.opened = r.ready.Czxid
			return nil
		case len(r.members) >= d.n:
			opened, err := d.commit(ctx, r)
			if err != nil {
				return d.giveUp(ctx, err)
			}
			if opened != 0 {
				d.opened = opened
				return nil
			}
			// Refused (someone changed something), or made with no
			// zxid to read: look again.
			continue
		}
		// Only the ready node's coming (or a stale one's going) can open
		// the barrier for us: the member that completes the count makes
		// it. Watch it, and look again if it changed since the look.
		ready := framework.JoinPath(d.path, readyNode)
		changed := d.c.StateChanged()
		now, ch, err := d.c.ExistsW(ctx, ready)
		if err != nil {
			return d.giveUp(ctx, err)
		}
		if !sameNode(now, r.ready) {
			d.unwatch(ctx, ready, framework.ExistWatch)
			continue
		}
		if err := d.wait(ctx, ready, framework.ExistWatch, ch, changed); err != nil {
			return d.giveUp(ctx, err)
		}
	}
}

// wait waits for the one-shot watch ch on p to fire, for a change of the
// client's connection state (changed, taken before the watch was set: a
// reconnection or a new session says to look again, which finds a lost
// membership), or for ctx's end (its error). It gives the watch back
// unless it fired. The caller looks again in every case.
func (d *Double) wait(ctx context.Context, p string, kind framework.WatchKind, ch <-chan zk.Event, changed <-chan struct{}) error {
	for {
		select {
		case <-ch:
			d.wakeups.Add(1)
			return nil
		case <-changed:
			// Looking is for when the client is connected again: a
			// look while suspended only waits for that.
			changed = d.c.StateChanged()
			if s := d.c.State(); s == connstate.Suspended || s == connstate.Lost {
				continue
			}
			d.unwatch(ctx, p, kind)
			d.wakeups.Add(1)
			return nil
		case <-ctx.Done():
			d.unwatch(ctx, p, kind)
			return ctx.Err()
		}
	}
}

// sameNode reports whether a and b are the same state of a node: both
// missing, or the same incarnation at the same version.
func sameNode(a, b *zk.Stat) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Czxid == b.Czxid && a.Version == b.Version
}

// unwatch gives back the one-shot watch of a wait that ends without its
// event, so that nothing of Enter's or Leave's fires later; on a clean-up context,
// and if it fails the watch goes when it fires or with the session.
func (d *Double) unwatch(ctx context.Context, p string, kind framework.WatchKind) {
	cctx, cancel := d.c.CleanupContext(ctx)
	defer cancel()
	if err := d.c.Unwatch(cctx, p, kind); err != nil {
		d.log.Debug("giving back a watch failed", zap.String("node", p), zap.Error(err))
	}
}

// commit makes the ready node for the members of r (replacing a stale
// one) if they all still exist and nobody opened the barrier since r, in
// one transaction that also moves the barrier node's version, which a
// member giving up checks. It returns the ready node's czxid (the
// transaction's zxid, read from the barrier node's new mzxid), or 0 if the
// transaction was refused.
func (d *Double) commit(ctx context.Context, r round) (int64, error) {
	ready := framework.JoinPath(d.path, readyNode)
	ops := make([]framework.Op, 0, len(r.members)+3)
	for _, m := range r.members {
		ops = append(ops, framework.CheckOp(framework.JoinPath(d.path, m), -1))
	}
	if r.ready != nil {
		ops = append(ops, framework.DeleteOp(ready, r.ready.Version))
	}
	pdata, err := d.data(ctx, r)
	if errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrBadVersion) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	ops = append(ops, framework.CreateOp(ready, nil, framework.Persistent),
		framework.SetOp(d.path, pdata, r.pstat.Version))
	res, err := d.c.Multi(ctx, ops...)
	switch {
	case err == nil:
		d.log.Debug("barrier opened", zap.Int("members", len(r.members)))
		if last := res[len(res)-1]; last.Stat != nil {
			return last.Stat.Mzxid, nil
		}
		return 0, nil // the caller's next look finds it open
	case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrNodeExists), errors.Is(err, zk.ErrBadVersion):
		return 0, nil
	}
	return 0, err
}

// giveUp leaves the barrier after cause ended the wait: it deletes our node
// in a transaction that fails if the barrier opened since our last look,
// in which case we are in, and Enter succeeds. It runs on a clean-up
// context; if that fails, a guaranteed delete removes the node in the
// background.
func (d *Double) giveUp(ctx context.Context, cause error) error {
	cctx, cancel := d.c.CleanupContext(ctx)
	defer cancel()
	ready := framework.JoinPath(d.path, readyNode)
	for tries := 0; tries < 5; tries++ {
		r, err := d.look(cctx, false)
		if err != nil {
			break
		}
		switch {
		case !r.ours:
			return cause
		case d.open(r):
			d.log.Debug("barrier opened as the wait ended", zap.NamedError("cause", cause))
			d.opened = r.ready.Czxid
			return nil
		}
		ops := []framework.Op{framework.CheckOp(d.path, r.pstat.Version)}
		if r.ready == nil {
			// Asserts there is no ready node: the create fails if one
			// appeared.
			ops = append(ops, framework.CreateOp(ready, []byte{}, framework.Persistent), framework.DeleteOp(ready, -1))
		} else {
			ops = append(ops, framework.CheckOp(ready, r.ready.Version))
		}
		ops = append(ops, framework.DeleteOp(d.node, -1))
		_, err = d.c.Multi(cctx, ops...)
		if err == nil {
			return cause
		}
		if !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrNodeExists) && !errors.Is(err, zk.ErrBadVersion) {
			break
		}
	}
	d.cleanUp(ctx)
	return cause
}

// cleanUp deletes our node, in the background if need be.
func (d *Double) cleanUp(ctx context.Context) {
	cctx, cancel := d.c.CleanupContext(ctx)
	defer cancel()
	if err := d.c.Delete(cctx, d.node, framework.Quietly(), framework.Guaranteed()); err != nil {
		d.log.Info("deleting the member node failed; it is deleted in the background", zap.Error(err))
	}
}

// Leave leaves the barrier and blocks until every member of its round
// (those the ready node that let it in opened) has left, or ctx ends: the
// lowest waits for the others, the others delete their node and wait for
// the lowest, as in Curator; but every wake-up is followed by a fresh look,
// so a reconnection or a new session never lets a member out while one of
// its round is still in (Curator's leave returns then), and a member of
// the next round, made after our round's ready node, is not waited for. When ctx ends it
// returns ctx's error at once, never spinning, and our node is deleted all
// the same: this member has left, and the members waiting for it are not
// held up. The round's ready node is deleted by each member that finds
// everyone gone. ErrNotEntered without a successful Enter. If the
// membership was lost meanwhile (see Done), Leave still waits for the
// others and then returns an error wrapping ErrMemberLost.
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
		r, err := d.look(ctx, true)
		if err != nil {
			return err
		}
		in := d.inRound(r)
		ours := slices.ContainsFunc(in, func(m member) bool { return m.name == d.name })
		var target member
		switch {
		case len(in) == 0:
			return d.closeRound(ctx, r)
		case ours && len(in) == 1:
			// The last of the round: go, then look once more.
			if err := d.c.Delete(ctx, d.node, framework.Quietly()); err != nil {
				return err
			}
			continue
		case ours && in[0].name == d.name:
			target = in[len(in)-1] // the lowest waits for the highest
		default:
			if ours {
				if err := d.c.Delete(ctx, d.node, framework.Quietly()); err != nil {
					return err
				}
			}
			target = in[0] // the others wait for the lowest
		}
		if err := d.waitGone(ctx, target); err != nil {
			return err
		}
	}
}

// member is a member node of our round.
type member struct {
	name  string
	czxid int64
}

// inRound returns the members in r that belong to our round, sorted by
// name: made before the ready node that let us in. A member of the next
// round (even one whose handle was in ours: a handle keeps its name) was
// made after it and is neither waited for nor counted as ours.
func (d *Double) inRound(r round) []member {
	var in []member
	for _, m := range r.members {
		if stat := r.stats[m]; stat != nil && stat.Czxid < d.opened {
			in = append(in, member{name: m, czxid: stat.Czxid})
		}
	}
	return in
}

// closeRound deletes the ready node that opened our round once every
// member has left, if it is still that node and no round was opened since
// the look r (the transaction checks the barrier node's version, which
// every opening moves): the next round's ready node is never taken. A
// refusal means another member deleted it or a new round replaced it.
func (d *Double) closeRound(ctx context.Context, r round) error {
	if r.ready == nil || r.ready.Czxid != d.opened {
		return nil
	}
	_, err := d.c.Multi(ctx, framework.CheckOp(d.path, r.pstat.Version),
		framework.DeleteOp(framework.JoinPath(d.path, readyNode), r.ready.Version))
	if err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion) {
		return err
	}
	return nil
}

// waitGone waits, with a watch of that node alone, until m's node is
// deleted, or is no longer m (made again by the next round), or an event
// says to look again: the caller looks again in every case.
func (d *Double) waitGone(ctx context.Context, m member) error {
	p := framework.JoinPath(d.path, m.name)
	// A data watch: set only if the node exists (an exists watch on a
	// node gone already would stay on the server).
	changed := d.c.StateChanged()
	_, stat, ch, err := d.c.GetW(ctx, p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	if stat.Czxid != m.czxid {
		d.unwatch(ctx, p, framework.DataWatch)
		return nil
	}
	d.waits.Add(1)
	return d.wait(ctx, p, framework.DataWatch, ch, changed)
}
