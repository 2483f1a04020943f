package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/framework"
)

func (a *app) locksCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "locks",
		Short: "List and watch the locks, semaphores and elections under a path",
	}
	cmd.AddCommand(a.locksLsCommand(), a.locksWatchCommand())
	return cmd
}

func (a *app) locksLsCommand() *cobra.Command {
	var recursive bool
	cmd := &cobra.Command{
		Use:   "ls PATH",
		Short: "Show holders, then waiters in order, of each recipe at PATH",
		Long: `Shows the recipe whose nodes are PATH's children (with -r: every recipe at
or below PATH): its kind, then its holders and its waiters in the order they
will be granted, each with its node, client library, owner session (hex),
host (the node's data, where Curator writes the client's IP), age, fencing
token (the node's czxid) and whether the owner session is still connected.

Recognised layouts: Curator's and gocurator's mutex (lock-), read/write lock
(__READ__, __WRIT__), semaphore V2 (locks/ and leases/) and LeaderLatch
(latch-); kazoo's lock and read/write lock (__lock__, __rlock__);
go-zookeeper's lock (_c_<32 hex>-lock-). A V1 semaphore and a LeaderSelector
use the mutex layout and are shown as mutexes (semaphore leases --max tells
a V1 semaphore's holders). Such a mutex with more than one node is marked
"mutex or V1 semaphore: pass --max" (its first node is the mutex's holder;
a V1 semaphore's first N nodes all hold).

With -r, a tree with no recipe in use prints that it has none (status 0).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.locksLs(cmd.Context(), args[0], recursive)
		},
	}
	cmd.Flags().BoolVarP(&recursive, "recursive", "r", false, "look for recipes at every node below PATH too")
	return cmd
}

// listing reads the recipes at path (every level below with recursive)
// and the sessions' states.
func (a *app) listing(ctx context.Context, c *framework.Client, path string, recursive bool) ([]inspect.Lock, *inspect.Sessions, error) {
	depth := 2 // the children, and theirs for a V2 semaphore
	if recursive {
		depth = -1
	}
	rctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	root, err := inspect.Load(rctx, c, path, depth)
	if err != nil {
		return nil, nil, a.describe(path, err)
	}
	locks := inspect.Find(path, root, recursive)
	if len(locks) == 0 && (root.IsEphemeral() || len(root.Children) > 0 && !recursive) {
		return nil, nil, a.notALock(rctx, c, path, root)
	}
	s := inspect.QuerySessions(rctx, inspect.Servers(a.zk), a.timeout)
	inspect.Annotate(locks, s, time.Now())
	return locks, s, nil
}

// notALock says what was found at path instead of a lock: another
// recipe, a participant's node, plain nodes (exit 65).
func (a *app) notALock(ctx context.Context, c *framework.Client, path string, root *inspect.Znode) error {
	place, z, err := inspect.Locate(ctx, c, path)
	if err != nil {
		place, z = inspect.Place{Layout: inspect.Identify(path, root)}, root
	}
	hint := ""
	if place.Layout.Kind == "" && !z.IsEphemeral() {
		hint = "use -r to search below it"
	}
	return wrongKind(path, place, z, "a lock, semaphore or election", hint)
}

func (a *app) locksLs(ctx context.Context, path string, recursive bool) error {
	c, err := a.open(ctx, path)
	if err != nil {
		return err
	}
	defer c.Close()
	locks, s, err := a.listing(ctx, c, path, recursive)
	if err != nil {
		return err
	}
	if a.json {
		return writeJSON(a.stdout, newLocksDoc(locks, s), false)
	}
	if len(locks) == 0 {
		fmt.Fprintf(a.stdout, "%s: no lock, semaphore or election is in use\n", path)
		return nil
	}
	writeLocks(a.stdout, locks)
	warnSessions(a.stderr, s)
	return nil
}

func (a *app) locksWatchCommand() *cobra.Command {
	var recursive bool
	var updates int
	cmd := &cobra.Command{
		Use:   "watch PATH",
		Short: "Show locks ls PATH again each time a holder or waiter comes or goes",
		Long: `Prints what locks ls PATH prints, then again after every change, until
interrupted. Changes are seen through ZooKeeper watches on PATH and on every
recipe directory found (no polling): a node created or deleted there prints
a new view. A change in a session's connection alone does not. With --json,
one JSON document per line, with the time of the view ("time", RFC 3339).

AGE is the node's, so a holder's counts its wait: ZooKeeper records no time
for a grant. A node watch saw waiting and then holding shows "(held D)"
after it, the time since the view that first showed it holding (JSON
held_since, held_seconds).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return a.locksWatch(ctx, args[0], recursive, updates)
		},
	}
	cmd.Flags().BoolVarP(&recursive, "recursive", "r", false, "look for recipes at every node below PATH too")
	cmd.Flags().IntVar(&updates, "updates", 0, "stop after this many views (0: until interrupted)")
	return cmd
}

func (a *app) locksWatch(ctx context.Context, path string, recursive bool, updates int) error {
	err := a.watchLoop(ctx, path, recursive, updates)
	if err != nil && ctx.Err() != nil {
		return nil // interrupted: the way to stop watching
	}
	return err
}

func (a *app) watchLoop(ctx context.Context, path string, recursive bool, updates int) error {
	c, err := a.open(ctx, path)
	if err != nil {
		return err
	}
	defer c.Close()
	// The watch first, then each listing: a change after a listing is an
	// event that brings the next one.
	w, stop, err := a.watchTree(ctx, c, path)
	if err != nil {
		return err
	}
	defer stop()
	grants := newGrants()
	for n := 1; ; n++ {
		locks, s, err := a.listing(ctx, c, path, recursive)
		if err != nil {
			return err
		}
		now := time.Now()
		grants.mark(locks, now)
		if a.json {
			doc := newLocksDoc(locks, s)
			doc.Time = &now
			err = writeJSON(a.stdout, doc, true)
		} else {
			fmt.Fprintf(a.stdout, "--- %s\n", now.Format(time.RFC3339))
			if len(locks) == 0 {
				fmt.Fprintf(a.stdout, "%s: no lock, semaphore or election is in use\n", path)
			}
			writeLocks(a.stdout, locks)
		}
		if err != nil {
			return err
		}
		if updates > 0 && n >= updates {
			return nil
		}
		if err := a.nextChange(ctx, w, path, recursive); err != nil {
			return err
		}
	}
}

// watchTree watches path and everything below it, waiting at most the
// command's timeout for the server to set the watch. The Watcher lives
// until stop.
func (a *app) watchTree(ctx context.Context, c *framework.Client, path string) (w *framework.Watcher, stop func(), err error) {
	wctx, cancel := context.WithCancel(ctx)
	timer := time.AfterFunc(a.timeout, cancel)
	w, err = c.Watch(wctx, path, framework.Recursive())
	if !timer.Stop() && err != nil && ctx.Err() == nil {
		err = fmt.Errorf("no watch within %v: %w", a.timeout, context.DeadlineExceeded)
	}
	if err != nil {
		cancel()
		return nil, nil, a.describe(path, err)
	}
	return w, func() { _ = w.Close(); cancel() }, nil
}

// nextChange waits for a change that can alter the view: a node created
// or deleted at the depth the listing reads (the children of path and
// theirs, for a V2 semaphore's locks/ and leases/; with recursive, any),
// or a reconnection, after which the server may have changed unseen. Data
// changes do not alter a view. It then takes the events already queued, so
// a burst of changes gives one view. It returns nil when ctx ends.
func (a *app) nextChange(ctx context.Context, w *framework.Watcher, path string, recursive bool) error {
	relevant := func(ev framework.WatchEvent) bool {
		switch ev.Type {
		case framework.WatchResync:
			return true
		case framework.WatchCreated, framework.WatchDeleted, framework.WatchChildrenChanged:
			return recursive || depthBelow(path, ev.Path) <= 2
		}
		return false
	}
	for {
		select {
		case ev, ok := <-w.Events():
			if !ok {
				return a.watchEnded(ctx, w)
			}
			if !relevant(ev) {
				continue
			}
			for {
				select {
				case _, ok := <-w.Events():
					if !ok {
						return a.watchEnded(ctx, w)
					}
				default:
					return nil
				}
			}
		case <-ctx.Done():
			return nil
		}
	}
}

// watchEnded says why the Watcher's events stopped: nil for an interrupt.
func (a *app) watchEnded(ctx context.Context, w *framework.Watcher) error {
	if ctx.Err() != nil {
		return nil
	}
	if err := w.Err(); err != nil {
		return fmt.Errorf("connection to %s closed: %w", a.zk, err)
	}
	return fmt.Errorf("connection to %s closed", a.zk)
}

// depthBelow is how many levels p is below root: 0 for root itself.
func depthBelow(root, p string) int {
	rel := strings.TrimPrefix(p, root)
	if root == "/" {
		rel = p
	}
	return strings.Count(rel, "/")
}

// grants remembers, across locks watch's views, the nodes seen waiting and
// when each was first seen holding: the age of a hold, which ZooKeeper
// does not record (a node's ctime counts its wait too).
type grants struct {
	waited map[string]bool
	since  map[string]time.Time
}

func newGrants() *grants {
	return &grants{waited: map[string]bool{}, since: map[string]time.Time{}}
}

// mark records the view taken at now and sets HeldSince on the holders
// whose grant was seen. A view follows the event of the change at once, so
// now is the grant's time to within a round trip.
func (g *grants) mark(locks []inspect.Lock, now time.Time) {
	present := map[string]bool{}
	for i := range locks {
		for _, p := range locks[i].Waiters {
			present[p.Node], g.waited[p.Node] = true, true
		}
		for j := range locks[i].Holders {
			h := &locks[i].Holders[j]
			present[h.Node] = true
			t, ok := g.since[h.Node]
			if !ok && g.waited[h.Node] {
				t, ok = now, true
				g.since[h.Node] = now
			}
			if ok {
				h.HeldSince, h.HeldSeconds = &t, now.Sub(t).Seconds()
			}
		}
	}
	for node := range g.waited {
		if !present[node] {
			delete(g.waited, node)
			delete(g.since, node)
		}
	}
}
