package chaos

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locking"
	"github.com/gocurator/curator/zktest"
)

// Timed cuts: the cut-grant fault cuts a client's connections within a
// millisecond or so of the moment the holder ahead of its cohort's node
// releases, so that the cut lands on the grant (issue 20: a local
// hand-over handle granted just as the connection dropped stayed held for
// good).
const (
	grantCutsPerFault = 12
	// grantCutHold is how long a timed cut lasts once the client is
	// Suspended: its handles are judged at the end of it.
	grantCutHold = 500 * time.Millisecond
	// grantCutSpread is the most a cut waits after the release is seen
	// (at random, uniformly): the grant comes one round trip or so after
	// the release, so cuts land before, on and after it.
	grantCutSpread = 1500 * time.Microsecond
)

// cutWindow is shared by a timed cut and its target client's cohort
// workers: a hold that begins while the window is armed lasts until Done
// closes or the window is disarmed, as the holder did, so a grant
// that survives a cut is seen as held when the cut is judged.
type cutWindow struct {
	mu      sync.Mutex
	open    chan struct{} // non-nil while armed, closed by disarm
	granted time.Time     // the first hold begun while armed
	refused time.Time     // the first acquire failed while armed
}

func (w *cutWindow) arm() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.open = make(chan struct{})
	w.granted, w.refused = time.Time{}, time.Time{}
}

// disarm ends the window and returns its first grant and refusal.
func (w *cutWindow) disarm() (granted, refused time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.open != nil {
		close(w.open)
		w.open = nil
	}
	return w.granted, w.refused
}

// grant notes a hold begun at t; it returns the channel that ends the
// hold's plan, nil when the window is not armed.
func (w *cutWindow) grant(t time.Time) <-chan struct{} {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.open != nil && w.granted.IsZero() {
		w.granted = t
	}
	return w.open
}

func (w *cutWindow) refuse(t time.Time) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.open != nil && w.refused.IsZero() {
		w.refused = t
	}
}

// probe is one lock handle of a client, for the judgement of a timed cut.
type probe struct {
	name   string
	isHeld func() bool
	done   func() <-chan struct{}
}

// heldOpen reports whether the handle says it holds with its Done open.
func (p probe) heldOpen() bool {
	if !p.isHeld() {
		return false
	}
	select {
	case <-p.done():
		return false
	default:
		return true
	}
}

// cutGrants is the cut-grant fault: up to grantCutsPerFault timed cuts of
// random clients, within a budget of a few session timeouts.
func (in *injector) cutGrants(f *Fault) {
	deadline := time.Now().Add(5 * in.st)
	n := 0
	for i := 0; i < grantCutsPerFault && time.Now().Before(deadline); i++ {
		target := in.rng.Intn(len(in.clients))
		if g, ok := in.cutGrant(target, deadline); ok {
			in.rec.grantCut(g)
			in.logf("timed cut of client %d (%s): %s", g.Client, g.Workload, g.summary())
			n++
		}
	}
	f.Detail = fmt.Sprintf("%d timed cuts", n)
}

// cutGrant waits (until deadline) for client i's cohort node to be second
// in its queue, watches the node ahead through i's own connection, and
// cuts i's connections as soon as that node is deleted (after a random
// wait of up to grantCutSpread). Once i is Suspended and the cut has lasted
// grantCutHold, under the standard policy none of i's handles may say it
// holds with Done open.
func (in *injector) cutGrant(i int, deadline time.Time) (GrantCut, bool) {
	wl := in.workloads[i]
	lock := pathsOf(wl).cohort
	c := in.clients[i]
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	for ctx.Err() == nil {
		kids, ok := in.queue(ctx, lock)
		if !ok {
			sleep(ctx, 10*time.Millisecond)
			continue
		}
		sid := c.SessionID()
		if len(kids) < 2 || sid == 0 || kids[1].owner != sid || kids[0].owner == sid {
			// Not second behind another client: look again soon.
			// (No watch on the listing: a watch on a path that stays
			// empty would outlive the run.)
			sleep(ctx, 5*time.Millisecond)
			continue
		}
		win := in.windows[i]
		win.arm()
		// The watch is the target's own, on its own connection: its
		// event arrives in the same frame as the one its lock loop
		// waits for, which then asks for the listing and is granted one
		// round trip later. GetWOrdered: go-zookeeper's own channel, one
		// hop less; a node already gone leaves no watch behind.
		_, _, ch, err := c.GetWOrdered(ctx, lock+"/"+kids[0].name)
		if err != nil {
			win.disarm()
			continue
		}
		var ev zk.Event
		select {
		case ev = <-ch:
		case <-ctx.Done():
			win.disarm()
			return GrantCut{}, false
		}
		if ev.Type != zk.EventNodeDeleted {
			win.disarm()
			continue
		}
		released := time.Now()
		spin(time.Duration(in.rng.Int63n(int64(grantCutSpread))))
		g := GrantCut{Workload: wl, Client: i, Released: released, Cut: time.Now()}
		in.cutClient(i)
		// Judge once the client has been Suspended for the cut's length.
		if in.awaitDisconnected(c, in.st) {
			sleep(context.Background(), grantCutHold)
			if _, std := c.ErrorPolicy().(connstate.StandardPolicy); std && !c.State().IsConnected() {
				g.Judged = true
				for _, p := range in.probes[i] {
					if p.heldOpen() {
						g.Held = append(g.Held, p.name)
					}
				}
			}
		}
		g.Granted, g.Refused = win.disarm()
		for _, p := range in.proxies[i] {
			p.Restore()
		}
		bctx, bcancel := context.WithTimeout(context.Background(), 2*in.st)
		_ = c.BlockUntilConnected(bctx)
		bcancel()
		return g, true
	}
	return GrantCut{}, false
}

func (g GrantCut) summary() string {
	s := fmt.Sprintf("cut %v after the release ahead", g.Cut.Sub(g.Released).Round(time.Microsecond))
	if !g.Granted.IsZero() {
		s += fmt.Sprintf(", grant %v after the release", g.Granted.Sub(g.Released).Round(time.Microsecond))
	}
	if !g.Refused.IsZero() {
		s += fmt.Sprintf(", acquire failed %v after the release", g.Refused.Sub(g.Released).Round(time.Microsecond))
	}
	if g.Judged {
		s += fmt.Sprintf(", held after Suspended: %v", g.Held)
	}
	return s
}

// cutClient cuts client i's proxies, first the one it is connected through.
func (in *injector) cutClient(i int) {
	server := ""
	if conn := in.clients[i].Conn(); conn != nil {
		server = conn.Server()
	}
	cutAll(in.proxies[i], server)
}

// cutAll cuts a client's proxies as one partition: first every proxy but
// the one the client is connected through (first; "" if none is known)
// stops forwarding new connections (a black hole holds them), then that
// one is cut, then all. Cut one after another, a client whose connection
// the first cut closed redials at once through a proxy not cut yet, and a
// lock holder under StandardPolicy, which lost its hold with the first
// cut, then deletes its node there while its process tree still runs: a
// gap of the harness's making (one CI-like run let an exec round's next
// holder in within half a second that way), not a partition's.
func cutAll(ps []*zktest.Proxy, first string) {
	for _, p := range ps {
		if p.Addr() != first {
			p.BlackHole()
		}
	}
	for _, p := range ps {
		if p.Addr() == first {
			p.Cut()
		}
	}
	for _, p := range ps {
		p.Cut()
	}
}

// awaitDisconnected waits, at most d, for c to leave the connected state.
func (in *injector) awaitDisconnected(c *framework.Client, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		ch := c.StateChanged()
		if !c.State().IsConnected() {
			return true
		}
		select {
		case <-ch:
		case <-t.C:
			return false
		}
	}
}

// queued is one node of a lock's queue and its owner's session.
type queued struct {
	name  string
	seq   int32
	owner int64
}

// queue reads lock's queue, in order, with each node's owner.
func (in *injector) queue(ctx context.Context, lock string) ([]queued, bool) {
	kids, _, err := in.observer.Children(ctx, lock)
	if err != nil {
		return nil, false
	}
	var q []queued
	for _, k := range kids {
		seq, ok := locking.Sequence(k, "lock-")
		if !ok {
			continue
		}
		st, err := in.observer.Exists(ctx, lock+"/"+k)
		if err != nil || st == nil {
			continue
		}
		q = append(q, queued{name: k, seq: seq, owner: st.EphemeralOwner})
	}
	sort.Slice(q, func(a, b int) bool { return q[a].seq < q[b].seq })
	return q, true
}

// spin waits d precisely (a timer can be a millisecond late).
func spin(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

// locker's state, for a probe.
type heldLocker interface {
	IsHeld() bool
	Done() <-chan struct{}
}

func probeOf(name string, l heldLocker) probe {
	return probe{name: name, isHeld: l.IsHeld, done: l.Done}
}
