package barrier

import (
	"context"
	"errors"
	"slices"

	"github.com/go-zookeeper/zk"
	"golang.org/x/sync/errgroup"

	"github.com/gocurator/curator/framework"
)

// round is one look at the barrier.
type round struct {
	pstat    *zk.Stat // the barrier node's, from the listing; nil: no barrier node
	members  []string // children but ready, sorted
	ours     bool     // our node is among them
	hasReady bool     // the listing shows a ready node
	// ready is the ready node's Stat (nil: none), read after the listing
	// by look, beside it by glance.
	ready *zk.Stat
}

// list reads the barrier's listing, with the barrier node's Stat.
func (d *Double) list(ctx context.Context) (round, error) {
	var r round
	kids, pstat, err := d.c.Children(ctx, d.path)
	if err != nil {
		if errors.Is(err, zk.ErrNoNode) {
			return r, nil
		}
		return r, err
	}
	r.pstat = pstat
	for _, k := range kids {
		switch k {
		case readyNode:
			r.hasReady = true
		case d.name:
			r.ours = true
			r.members = append(r.members, k)
		default:
			r.members = append(r.members, k)
		}
	}
	slices.Sort(r.members)
	return r, nil
}

// look reads the barrier in order: its listing, then the ready node's Stat
// if the listing shows one. Two round trips, but the ready node is read
// after the barrier node's Stat, which a transaction that checks that
// Stat's version and deletes or asserts the ready node it read relies on
// (commit, giveUp): an opening between the two reads would otherwise pass
// the version check and have its new ready node taken for the one read.
func (d *Double) look(ctx context.Context) (round, error) {
	r, err := d.list(ctx)
	if err != nil || !r.hasReady {
		return r, err
	}
	r.ready, err = d.c.Exists(ctx, d.readyPath())
	return r, err
}

// glance reads the listing and the ready node's Stat side by side: one
// round trip, in no particular order, so that r.ready says only what the
// ready node was at some moment of it. Enough for the round rule (a ready
// node younger than ours opens the barrier for us, whenever it was read),
// not for a transaction that needs the ready node as of the listing.
func (d *Double) glance(ctx context.Context) (round, error) {
	var (
		r     round
		ready *zk.Stat
		g     errgroup.Group
	)
	g.Go(func() (err error) {
		ready, err = d.c.Exists(ctx, d.readyPath())
		return err
	})
	r, lerr := d.list(ctx)
	if err := errors.Join(lerr, g.Wait()); err != nil {
		return r, err
	}
	r.ready = ready
	return r, nil
}

// readyPath is the ready node's path.
func (d *Double) readyPath() string { return framework.JoinPath(d.path, readyNode) }

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
