package barrier

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"
	"go.uber.org/zap"

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
	roster roster // which member nodes are of our round, as far as known
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
	d.roster.reset()
	ready := d.readyPath()
	// The watch on ready goes out beside the create: whether the server
	// takes it before or after our node, a listing that follows the create
	// and finds fewer than n members lets us wait on it (a ready node made
	// after the watch fires it; one made before it is in its answer), so a
	// member that waits costs one round trip before it waits.
	changed := d.c.StateChanged()
	var w readyWatch
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		// Answered even if ctx ends meanwhile (within a grace), so that a
		// watch set is known and given back on failure.
		wctx, done := writegrace.Context(ctx)
		w.stat, w.ch, w.err = d.c.ExistsW(wctx, ready)
		w.err = done(w.err)
		w.live = w.err == nil
	}()
	err := d.create(ctx)
	<-watched
	if err != nil {
		d.giveBack(ctx, &w)
		return err
	}
	var first *round // the first listing, for the roster
	for {
		if w.live {
			select {
			case <-w.ch: // fired since: read the ready node
				w.live = false
				d.wakeups.Add(1) // an event that makes us look again
			default:
			}
		}
		var r round
		if w.live {
			// The watch's answer stands for the ready node: nothing
			// changed it since, or the event would be in.
			r, err = d.list(ctx)
			r.ready = w.stat
		} else {
			r, err = d.glance(ctx)
		}
		if err != nil {
			d.giveBack(ctx, &w)
			return d.giveUp(ctx, err)
		}
		if first == nil {
			first = &r
		}
		switch {
		case !r.ours:
			d.giveBack(ctx, &w)
			return ErrMemberLost
		case closed(d.c):
			// The client closed during the look: its session (and our
			// node) ended with it, which is no lost membership.
			return framework.ErrClosed
		case d.c.SessionID() != d.owner:
			// A new session: our node is the old one's, and goes with it
			// when the server expires it. Take it now, so that nobody
			// counts a member that is gone.
			d.giveBack(ctx, &w)
			d.cleanUp(ctx)
			return fmt.Errorf("%w: the session of member node %s ended", ErrMemberLost, d.node)
		case d.open(r):
			d.giveBack(ctx, &w)
			d.pass(r.ready.Czxid, *first, r)
			return nil
		case len(r.members) >= d.n:
			opened, err := d.commit(ctx, r)
			// A commit made the ready node, which fired the watch (the
			// event comes before the reply); after a refusal the next
			// pass reads the ready node afresh.
			d.giveBack(ctx, &w)
			if err != nil {
				return d.giveUp(ctx, err)
			}
			if opened != 0 {
				d.pass(opened, *first, r)
				return nil
			}
			// Refused (someone changed something), or made with no
			// zxid to read: look again.
			continue
		}
		// Only the ready node's coming (or a stale one's going) can open
		// the barrier for us: the member that completes the count makes
		// it. Watch it, and look again if it changed since the look.
		if !w.live {
			changed = d.c.StateChanged()
			w.stat, w.ch, err = d.c.ExistsW(ctx, ready)
			if err != nil {
				return d.giveUp(ctx, err)
			}
			w.live = true
			if !sameNode(w.stat, r.ready) {
				d.giveBack(ctx, &w)
				continue
			}
		}
		err = d.wait(ctx, ready, framework.ExistWatch, w.ch, changed)
		w.live = false // fired, or given back by wait
		if err != nil {
			return d.giveUp(ctx, err)
		}
	}
}

// readyWatch is Enter's one-shot watch of the ready node.
type readyWatch struct {
	stat *zk.Stat        // the ready node when the watch was set; nil: none
	ch   <-chan zk.Event // its event
	err  error           // of the ExistsW that set it
	live bool            // set, and neither fired (as far as we know) nor given back
}

// giveBack gives back w if it is live.
func (d *Double) giveBack(ctx context.Context, w *readyWatch) {
	if w.live {
		d.unwatch(ctx, d.readyPath(), framework.ExistWatch)
		w.live = false
	}
}

// pass records that the barrier opened for us at the ready node made at
// opened, and what our listings (the first after our create, and the one
// that found it open) tell Leave of the round's members.
func (d *Double) pass(opened int64, first, last round) {
	d.opened = opened
	d.roster.learn(first, opened)
	d.roster.learn(last, opened)
	d.roster.czxid[d.name] = d.czxid
}

// create makes our member node (and the barrier's path) and keeps its
// czxid and session.
func (d *Double) create(ctx context.Context) error {
	var st zk.Stat
	cctx, done := writegrace.Context(ctx)
	if err := done(d.makeNode(cctx, &st)); err != nil {
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
	return nil
}

// makeNode creates our member node, storing its Stat in st. If the
// barrier's node is missing (a new barrier, or its container went when it
// was last empty), it makes that node as a container, with its parents if
// need be, and tries again: three round trips on a new barrier whose parent
// exists, where creating parents on the member's create makes every
// ancestor again, top down, one round trip each.
func (d *Double) makeNode(ctx context.Context, st *zk.Stat) error {
	create := func() error {
		_, err := d.c.Create(ctx, d.node, nil, framework.WithMode(framework.Ephemeral), framework.StoringStatIn(st))
		return err
	}
	err := create()
	for tries := 0; errors.Is(err, zk.ErrNoNode) && tries < 3; tries++ {
		_, perr := d.c.Create(ctx, d.path, []byte{}, framework.WithMode(framework.Container),
			framework.CreatingParentContainers())
		if perr != nil && !errors.Is(perr, zk.ErrNodeExists) {
			return perr
		}
		err = create()
	}
	return err
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
// member giving up checks. It returns the czxid of the ready node that
// opens the barrier for us: ours (the transaction's zxid, read from the
// barrier node's new mzxid), or the one another member made first; 0 if
// the transaction was refused otherwise.
func (d *Double) commit(ctx context.Context, r round) (int64, error) {
	ready := d.readyPath()
	// The ready node as of the listing, read after it (see look): the
	// version check below covers what happened since.
	r.ready = nil
	if r.hasReady {
		var err error
		if r.ready, err = d.c.Exists(ctx, ready); err != nil {
			return 0, err
		}
	}
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
	case errors.Is(err, zk.ErrNodeExists) && r.ready == nil:
		// Another member made the ready node first (members arriving
		// together all count n), after our listing and so after our
		// node: it opens the barrier for us if it is still there.
		st, err := d.c.Exists(ctx, ready)
		if err != nil || st == nil || st.Czxid <= d.czxid {
			return 0, err
		}
		return st.Czxid, nil
	case refused(err):
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
	ready := d.readyPath()
	for tries := 0; tries < 5; tries++ {
		r, err := d.look(cctx)
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

// closed reports whether Close was called on c.
func closed(c *framework.Client) bool {
	select {
	case <-c.Done():
		return true
	default:
		return false
	}
}
