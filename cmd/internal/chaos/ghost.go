package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/node"
)

// ViolationGhost: a node of recipes/node existed on the server well after
// its Close returned nil, or a node of the workload outlived the run: a
// write the library stopped waiting for landed after the caller moved on (a
// ghost group member or service instance, CURATOR-164's symptom; issue 33).
const ViolationGhost = "ghost-node"

// Abandoned-write modes: how a cycle of the ghost workload ends its Node.
const (
	// GhostCloseRecreating closes the Node from its Recreating listener,
	// right after another session deleted its node: Close meets the
	// re-create in flight.
	GhostCloseRecreating = "close-while-recreating"
	// GhostCancelStart starts the Node on a ctx that ends within a few
	// milliseconds, mid-create, then closes it.
	GhostCancelStart = "cancel-start"
	// GhostCancelClose closes a started Node on a ctx that ends within a
	// few milliseconds.
	GhostCancelClose = "cancel-close"
)

// GhostModes lists the modes of the ghost workload.
var GhostModes = []string{GhostCloseRecreating, GhostCancelStart, GhostCancelClose}

// ghostsPath is the directory of a workload's ghost-workload nodes.
func ghostsPath(workload string) string { return Root + "/" + workload + "/ghosts" }

// GhostStats sums up the abandoned-write workload.
type GhostStats struct {
	Cycles   map[string]int // Nodes made and closed, by mode
	CloseNil map[string]int // of which Close returned nil, by mode
	Checked  int            // Close-nil cycles checked on the server after the grace
	Ghosts   int            // nodes found on the server after the grace
}

// ghostCheck is a node whose Close returned nil, to be looked for on the
// server once due.
type ghostCheck struct {
	workload, name, mode string
	closed, due          time.Time
	session              int64 // the client's session when Close returned
}

// ghostRunner runs the abandoned-write workload: each client makes Nodes
// (recipes/node, ephemeral, unique paths) and ends them the ways that
// abandon a write (see the modes), while the faults go on; a Node whose
// Close returned nil is looked for on the server a grace later (two
// session timeouts: long enough for any reply in flight to have landed and
// for a session lost meanwhile to have expired on the server), and the
// end state has no node left.
type ghostRunner struct {
	mu     sync.Mutex
	st     GhostStats
	vs     []Violation
	start  time.Time
	grace  time.Duration
	checks chan ghostCheck
	done   chan struct{}
}

func newGhostRunner(start time.Time, st time.Duration) *ghostRunner {
	return &ghostRunner{start: start, grace: 2 * st, checks: make(chan ghostCheck, 4096), done: make(chan struct{}),
		st: GhostStats{Cycles: map[string]int{}, CloseNil: map[string]int{}}}
}

// run makes and ends Nodes on c until ctx ends; observer, another
// session, deletes nodes to make Nodes re-create them.
func (r *ghostRunner) run(ctx context.Context, c, observer *framework.Client, client int, workload string, st time.Duration, rng *rand.Rand) {
	for n := 0; ctx.Err() == nil; n++ {
		name := fmt.Sprintf("c%d-%d", client, n)
		mode := GhostModes[rng.Intn(len(GhostModes))]
		err := r.cycle(ctx, c, observer, framework.JoinPath(ghostsPath(workload), name), mode, st, rng)
		r.mu.Lock()
		r.st.Cycles[mode]++
		if err == nil {
			r.st.CloseNil[mode]++
		}
		r.mu.Unlock()
		if err == nil {
			now := time.Now()
			select {
			case r.checks <- ghostCheck{workload: workload, name: name, mode: mode, closed: now, due: now.Add(r.grace),
				session: c.SessionID()}:
			default: // the checker is behind: the end state still checks
			}
		}
		sleep(ctx, time.Duration(150+rng.Intn(200))*time.Millisecond)
	}
}

// cycle makes one Node at path and ends it as mode says; it returns
// Close's error.
func (r *ghostRunner) cycle(ctx context.Context, c, observer *framework.Client, path, mode string, st time.Duration, rng *rand.Rand) error {
	nd := node.New(c, path, []byte("ghost"))
	closeCtx := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.WithoutCancel(ctx), 3*st)
	}
	switch mode {
	case GhostCancelStart:
		sctx, cancel := context.WithTimeout(ctx, time.Duration(rng.Intn(8000))*time.Microsecond)
		_ = nd.Start(sctx)
		cancel()
		cctx, cancel := closeCtx()
		defer cancel()
		return nd.Close(cctx)
	case GhostCancelClose:
		sctx, cancel := context.WithTimeout(ctx, 3*st)
		_ = nd.Start(sctx)
		cancel()
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Duration(rng.Intn(4000))*time.Microsecond)
		// On an error the delete goes on in the background: the cycle
		// is judged by the end state alone.
		defer cancel()
		return nd.Close(cctx)
	}
	// GhostCloseRecreating: Close from the Recreating listener, as the
	// issue's user did, on a goroutine so that the listener returns.
	sctx, cancel := context.WithTimeout(ctx, 3*st)
	err := nd.Start(sctx)
	cancel()
	if err != nil {
		cctx, cancel := closeCtx()
		defer cancel()
		return nd.Close(cctx)
	}
	closed := make(chan error, 1)
	var once sync.Once
	stop := nd.Listen(func(e node.Event) {
		if e.State != node.Recreating {
			return
		}
		once.Do(func() {
			go func() {
				cctx, cancel := closeCtx()
				defer cancel()
				closed <- nd.Close(cctx)
			}()
		})
	})
	defer stop()
	dctx, cancel := context.WithTimeout(ctx, 3*st)
	derr := observer.Delete(dctx, nd.Path())
	cancel()
	if derr != nil && !errors.Is(derr, zk.ErrNoNode) {
		cctx, cancel := closeCtx()
		defer cancel()
		once.Do(func() {})
		return nd.Close(cctx)
	}
	t := time.NewTimer(6 * st)
	defer t.Stop()
	select {
	case err := <-closed:
		return err
	case <-t.C:
		// No Recreating seen (the delete raced a fault): close here.
		cctx, cancel := closeCtx()
		defer cancel()
		once.Do(func() {})
		return nd.Close(cctx)
	}
}

// checker looks for each closed node once it is due, until checks is
// closed and drained; observer reads the server.
func (r *ghostRunner) checker(observer *framework.Client) {
	defer close(r.done)
	for chk := range r.checks {
		if d := time.Until(chk.due); d > 0 {
			time.Sleep(d)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		kids, _, err := observer.Children(ctx, ghostsPath(chk.workload))
		cancel()
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			continue // a fault in between: the end state still checks
		}
		r.mu.Lock()
		r.st.Checked++
		var ghosts []string
		for _, k := range kids {
			if k == chk.name || strings.HasSuffix(k, "-"+chk.name) {
				ghosts = append(ghosts, k)
			}
		}
		r.mu.Unlock()
		for _, k := range ghosts {
			// When the node was made (the server's clock, on this
			// machine) and by which session tell a create that landed
			// after Close from a delete that never came.
			made := "its stat unread"
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if st, err := observer.Exists(sctx, framework.JoinPath(ghostsPath(chk.workload), k)); err == nil && st != nil {
				made = fmt.Sprintf("made %v after Close returned, by session 0x%x (the client's at Close: 0x%x)",
					time.UnixMilli(st.Ctime).Sub(chk.closed).Round(time.Millisecond), st.EphemeralOwner, chk.session)
			}
			cancel()
			r.mu.Lock()
			r.st.Ghosts++
			r.vs = append(r.vs, Violation{Kind: ViolationGhost, Workload: chk.workload, At: time.Since(r.start),
				Detail: fmt.Sprintf("node %s (%s) on the server %v after its Close returned nil; %s",
					k, chk.mode, time.Since(chk.closed).Round(time.Millisecond), made)})
			r.mu.Unlock()
		}
	}
}

// stats waits for the checks still due (the workers have stopped) and
// returns the stats and the violations found.
func (r *ghostRunner) stats() (GhostStats, []Violation) {
	close(r.checks)
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st, slices.Clone(r.vs)
}

// ghostsEmpty is the end-state check of the ghost workload: once the
// workers stopped and the faults healed, no node of it is left (a session
// lost meanwhile has expired within the end-state deadline).
func ghostsEmpty(in *injector) EndCheck {
	check := EndCheck{Name: "no ghost nodes left"}
	var left []string
	check.OK = poll(endStateDeadline, func(ctx context.Context) bool {
		left = left[:0]
		for _, wl := range Workloads {
			kids, _, err := in.observer.Children(ctx, ghostsPath(wl))
			if err != nil && !errors.Is(err, zk.ErrNoNode) {
				left = append(left, fmt.Sprintf("%s: %v", wl, err))
				continue
			}
			if len(kids) > 0 {
				left = append(left, fmt.Sprintf("%s: %s", wl, in.describe(ctx, ghostsPath(wl), kids)))
			}
		}
		return len(left) == 0
	})
	check.Detail = "no node of recipes/node left"
	if !check.OK {
		check.Detail = fmt.Sprint(left)
	}
	return check
}

// writeGhosts adds the abandoned-write workload's line to the report.
func (r Report) writeGhosts(b *strings.Builder) {
	g := r.Ghost
	fmt.Fprintf(b, "  abandoned writes:  cycles %s; Close nil %s; checked %d after %s, ghosts %d\n",
		formatMap(g.Cycles, GhostModes), formatMap(g.CloseNil, GhostModes), g.Checked, "2 session timeouts", g.Ghosts)
}
