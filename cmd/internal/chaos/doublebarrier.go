package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/barrier"
)

// ViolationBarrier: a double barrier member passed Enter without a ready
// node newer than its own on the server (it went through alone, Curator's
// GH-1290), more members passed in one round than were there, or a Leave
// outlived its deadline (CURATOR-536).
const ViolationBarrier = "barrier"

// barrierPath is a workload's double barrier.
func barrierPath(workload string) string { return Root + "/" + workload + "/barrier" }

// BarrierStats sums up the double-barrier workload: every client of a
// workload is one member of its barrier, for as many members as clients,
// and goes round after round: Enter, a short compute, Leave.
type BarrierStats struct {
	Passes     map[string]int // Enter returned nil, by workload
	Rounds     map[string]int // distinct rounds (ready nodes) passed
	FullRounds map[string]int // rounds every member passed
	EnterFails map[string]int // Enter returned an error (deadline, member lost)
	Lost       map[string]int // memberships ended by Done before Leave
	LeaveFails map[string]int
	WorstLeave time.Duration // the longest Leave past its deadline (0: none)
	// LeavesJudged counts the Leaves that returned nil and were checked on
	// the server: every other member node of the round already gone.
	LeavesJudged map[string]int
	// CutLeaves counts the cut-leave faults: a member's connections cut
	// while it waited in Leave for the others (issue 33: Leave returned
	// nil after a reconnect while the lowest member had not left).
	CutLeaves int
}

// barrierRunner runs the double-barrier workload and checks each pass on
// the server as it happens.
type barrierRunner struct {
	mu     sync.Mutex
	st     BarrierStats
	rounds map[string]map[int64]int // workload -> ready czxid -> passes
	vs     []Violation
	start  time.Time
	// leaving hears, without blocking, the index of a client whose member
	// has begun a Leave that waits for others: the cut-leave fault's cue.
	leaving chan int
}

func newBarrierRunner(start time.Time) *barrierRunner {
	return &barrierRunner{start: start, rounds: map[string]map[int64]int{}, leaving: make(chan int, 1),
		st: BarrierStats{Passes: map[string]int{}, Rounds: map[string]int{}, FullRounds: map[string]int{},
			EnterFails: map[string]int{}, Lost: map[string]int{}, LeaveFails: map[string]int{}, LeavesJudged: map[string]int{}}}
}

func (r *barrierRunner) violation(wl, format string, args ...any) {
	r.vs = append(r.vs, Violation{Kind: ViolationBarrier, Workload: wl, At: time.Since(r.start), Detail: fmt.Sprintf(format, args...)})
}

// run makes c a member of workload's barrier for members members and goes
// round after round until ctx ends.
func (r *barrierRunner) run(ctx context.Context, c *framework.Client, client int, workload string, members int, st time.Duration) {
	path := barrierPath(workload)
	for ctx.Err() == nil {
		d := barrier.NewDouble(c, path, members)
		ectx, cancel := context.WithTimeout(ctx, 4*st)
		err := d.Enter(ectx)
		cancel()
		if err != nil {
			r.mu.Lock()
			r.st.EnterFails[workload]++
			r.mu.Unlock()
			sleep(ctx, 50*time.Millisecond)
			continue
		}
		others := r.passed(ctx, c, workload, members)
		select {
		case <-d.Done():
		case <-time.After(20 * time.Millisecond): // compute
		}
		if d.Err() != nil {
			r.mu.Lock()
			r.st.Lost[workload]++
			r.mu.Unlock()
		}
		deadline := 4 * st
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deadline)
		if len(others) > 0 {
			select {
			case r.leaving <- client:
			default:
			}
		}
		t0 := time.Now()
		err = d.Leave(lctx)
		cancel()
		took := time.Since(t0)
		if err == nil {
			r.leftAlone(ctx, c, workload, others)
		}
		r.mu.Lock()
		if err != nil {
			r.st.LeaveFails[workload]++
		}
		// A hang detector, as the conformance suite's: a Leave returns at
		// its deadline, never spinning on past it.
		if late := took - deadline; late > 0 {
			r.st.WorstLeave = max(r.st.WorstLeave, late)
			if late > 5*time.Second {
				r.violation(workload, "Leave returned %v after its deadline", late)
			}
		}
		r.mu.Unlock()
	}
}

// leftAlone checks, on the server, a Leave that just returned nil: the
// other members of its round (others, the paths of their nodes when it
// passed Enter) must all have left. A node of the round still there was
// there when Leave returned (nodes never come back), so one found is a
// member left behind (issue 33: Leave returned on a reconnect while the
// lowest member had never called Leave).
func (r *barrierRunner) leftAlone(ctx context.Context, c *framework.Client, workload string, others []string) {
	if len(others) == 0 {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for _, p := range others {
		st, err := c.Exists(rctx, p)
		if err != nil {
			return // a fault in between: nothing can be judged
		}
		if st != nil {
			// What the next look into this needs: the node's czxid and
			// session, the leaver's session, and the ready node now.
			ready, _ := c.Exists(rctx, framework.JoinPath(barrierPath(workload), "ready"))
			readyNow := "none"
			if ready != nil {
				readyNow = fmt.Sprintf("0x%x", ready.Czxid)
			}
			r.mu.Lock()
			r.violation(workload, "Leave returned nil while member %s of its round had not left (its czxid 0x%x, session 0x%x; the leaver's session 0x%x; ready now %s)",
				p, st.Czxid, st.EphemeralOwner, c.SessionID(), readyNow)
			r.mu.Unlock()
			return
		}
	}
	r.mu.Lock()
	r.st.LeavesJudged[workload]++
	r.mu.Unlock()
}

// passed checks, on the server, the pass of a member whose Enter just
// returned nil: its node and a ready node newer than it exist (nobody
// deletes ready while a member of its round is still in), unless its
// session was lost meanwhile; and it counts the pass in ready's round. It
// returns the paths of the round's other members (the nodes older than
// ready), nil when the pass could not be judged.
func (r *barrierRunner) passed(ctx context.Context, c *framework.Client, workload string, members int) []string {
	path := barrierPath(workload)
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	kids, _, err := c.Children(rctx, path)
	var ready *zk.Stat
	if err == nil && slices.Contains(kids, "ready") {
		ready, err = c.Exists(rctx, framework.JoinPath(path, "ready"))
	}
	var own *zk.Stat
	session := c.SessionID()
	stats := map[string]*zk.Stat{}
	for _, k := range kids {
		if k == "ready" || err != nil {
			continue
		}
		st, serr := c.Exists(rctx, framework.JoinPath(path, k))
		if serr != nil {
			err = serr
			break
		}
		if st == nil {
			continue
		}
		stats[k] = st
		if st.EphemeralOwner == session && (own == nil || st.Czxid > own.Czxid) {
			own = st
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.st.Passes[workload]++
	if err != nil || own == nil {
		return nil // a fault in between: nothing can be judged
	}
	if ready == nil || ready.Czxid < own.Czxid {
		r.violation(workload, "a member passed Enter with no ready node newer than its own (%d members listed)", len(kids))
		return nil
	}
	var others []string
	for k, st := range stats {
		if st != own && st.Czxid < ready.Czxid {
			others = append(others, framework.JoinPath(path, k))
		}
	}
	if r.rounds[workload] == nil {
		r.rounds[workload] = map[int64]int{}
	}
	r.rounds[workload][ready.Czxid]++
	if n := r.rounds[workload][ready.Czxid]; n > members {
		r.violation(workload, "%d members passed the round of ready 0x%x, made for %d", n, ready.Czxid, members)
	}
	return others
}

// stats returns the stats and the violations found.
func (r *barrierRunner) stats(members int) (BarrierStats, []Violation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for wl, rounds := range r.rounds {
		r.st.Rounds[wl] = len(rounds)
		for _, n := range rounds {
			if n == members {
				r.st.FullRounds[wl]++
			}
		}
	}
	return r.st, slices.Clone(r.vs)
}

// barrierEmpty is the end-state check of the barriers: once the workers
// stopped, no member node is left. A ready node may be: one whose round's
// members were all lost is left for the next round to replace (the round
// rule), as in Curator.
func barrierEmpty(in *injector) EndCheck {
	check := EndCheck{Name: "no double barrier nodes left"}
	var left []string
	check.OK = poll(endStateDeadline, func(ctx context.Context) bool {
		left = left[:0]
		for _, wl := range Workloads {
			kids, _, err := in.observer.Children(ctx, barrierPath(wl))
			if err != nil && !errors.Is(err, zk.ErrNoNode) {
				left = append(left, fmt.Sprintf("%s: %v", wl, err))
				continue
			}
			kids = slices.DeleteFunc(kids, func(k string) bool { return k == "ready" })
			if len(kids) > 0 {
				left = append(left, fmt.Sprintf("%s: %s", wl, in.describe(ctx, barrierPath(wl), kids)))
			}
		}
		return len(left) == 0
	})
	check.Detail = "no member node"
	if !check.OK {
		check.Detail = fmt.Sprint(left)
	}
	return check
}
