package locking

import (
	"context"
	"fmt"
	"strings"

	"github.com/gocurator/curator/framework"
)

// Layout says where a driver's nodes live, what its decisions see and how a
// node that does not hold waits. The zero Layout is the loop's default:
// nodes directly under the lock path, foreign children ignored, and getData
// watches on the nodes the driver names (Verdict.Watch).
type Layout struct {
	// Dir is the sub-directory of the lock path that holds the nodes, one
	// path segment such as "leases" ("" for the lock path itself). It is
	// created with the path, as a container, and it is what the loop lists
	// and Participants reports.
	Dir string
	// AllChildren passes every child of the directory to GetsTheLock: the
	// participants in sequence order, then the children Sequence refuses
	// (foreign ones) in the server's order. Curator's V2 semaphore counts
	// them all, and a driver sharing its paths must count as it does.
	AllChildren bool
	// WatchChildren makes a node that does not hold wait for any change of
	// the directory (a children watch, which also fires when our own node
	// goes) instead of getData watches on the node the driver names, and
	// look again at every change: Verdict.Watch and HeldWhenGone are
	// ignored, GetsTheLock is asked once per listing, and nothing is ever
	// granted without a read. For decisions that depend on the whole
	// directory, such as a count. The first listing (the one sent behind
	// the create) sets no watch, so a node that holds at once leaves none.
	WatchChildren bool
}

// DirDriver is a Driver whose Layout is not the default one.
type DirDriver interface {
	Driver
	// Layout is called once, by New.
	Layout() Layout
}

// Attempt is what an AttemptDriver set up for one attempt (one node of
// ours); every field is optional.
type Attempt struct {
	// Abort closes when the attempt can no longer go on (Curator's V2
	// semaphore: its gate hold ended). A waiting node then starts over as
	// it does when it is lost: the loop deletes it, ends the attempt and,
	// under the client's retry policy, begins a new one.
	Abort <-chan struct{}
	// Check is called once, after our node was created and before the
	// first decision, with the children of the directory as listed right
	// behind the create (foreign ones included; nil if that listing did
	// not come): a look at the world that is only sound once our node
	// exists (each semaphore layout looks for the other's nodes). An error
	// fails the Acquire (after our node is deleted); zk.ErrNoNode means
	// the path went with our node, and the loop starts over.
	Check func(ctx context.Context, listing []string) error
	// End is called once when the attempt is decided: after the node holds,
	// or after the node of a failed attempt was deleted (and, if the create
	// failed, even with no node). The V2 semaphore releases its gate.
	End func(ctx context.Context)
	// Nodes are nodes Begin made for this attempt that must live exactly
	// as long as our node (the V1 semaphore's trace in leases/, which
	// Curator's V2 semaphore counts): the loop deletes them after our node
	// when the attempt fails, and a hold deletes them after its node when
	// it is released or lost. Deletes are guaranteed, as the node's. Begin
	// deletes what it made itself when it fails.
	Nodes []string
	// Session is the session Nodes live in (0: none): a node of ours made
	// in another session makes the attempt start over, since Nodes die
	// with their own session, not with our node's.
	Session int64

	tel *acquisition // the Acquire's measures, set by the loop
}

// AttemptDriver is a Driver with work to do around each of its nodes:
// Curator's V2 semaphore creates its lease node only while it holds a gate
// mutex, and lets the gate go once the lease is decided.
type AttemptDriver interface {
	Driver
	// Begin is called before each attempt's Node and create, with the
	// Acquire's ctx and wait (false: it must not wait for other holders).
	// An error fails the Acquire with no node made; ErrWouldBlock (wrapped)
	// says that a try would have to wait.
	Begin(ctx context.Context, wait bool) (Attempt, error)
}

// layoutOf returns d's layout and the directory it puts under path.
func layoutOf(path string, d Driver) (Layout, string, error) {
	dd, ok := d.(DirDriver)
	if !ok {
		return Layout{}, path, nil
	}
	lay := dd.Layout()
	if lay.Dir == "" {
		return lay, path, nil
	}
	dir := framework.JoinPath(path, lay.Dir)
	if strings.Contains(lay.Dir, "/") {
		return lay, dir, fmt.Errorf("%w: layout directory %q is not one path segment", framework.ErrInvalidPath, lay.Dir)
	}
	if err := framework.ValidatePath(dir); err != nil {
		return lay, dir, err
	}
	return lay, dir, nil
}

// begin begins an attempt for an AttemptDriver; the zero Attempt otherwise.
func (l *Loop) begin(ctx context.Context, wait bool) (Attempt, error) {
	if l.attempts == nil {
		return Attempt{}, nil
	}
	return l.attempts.Begin(ctx, wait)
}

// end ends the attempt a, if it has anything to end.
func (a *Attempt) end(ctx context.Context) {
	if a.End != nil {
		a.End(ctx)
	}
}

// dropNodes deletes a's Nodes, guaranteed: a failed attempt leaves none.
func (a *Attempt) dropNodes(ctx context.Context, c *framework.Client) {
	if len(a.Nodes) == 0 {
		return
	}
	dctx, cancel := c.CleanupContext(ctx)
	defer cancel()
	for _, n := range a.Nodes {
		_ = c.Delete(dctx, n, framework.Guaranteed(), framework.Quietly())
	}
}
