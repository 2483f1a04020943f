package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/leader"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/recipes/rwlock"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/zktest"
)

// Root is the path under which a run keeps its locks and resources, one
// subtree per workload (/chaos/standard, /chaos/session).
const Root = "/chaos"

// paths are one workload's locks and the resource nodes of its fenced
// writes.
type paths struct {
	mutex, long, sem, rw, cohort, rwCohort, election                      string
	resMutex, resLong, resSem, resRW, resCohort, resRWCohort, resElection string
}

func pathsOf(workload string) paths {
	base := Root + "/" + workload
	return paths{
		mutex: base + "/mutex", long: base + "/long", sem: base + "/sem", rw: base + "/rw", cohort: base + "/cohort",
		resMutex: base + "/res/mutex", resLong: base + "/res/long", resSem: base + "/res/sem", resRW: base + "/res/write",
		resCohort: base + "/res/cohort", election: base + "/election", resElection: base + "/res/election",
		rwCohort: base + "/rwcohort", resRWCohort: base + "/res/rwcohort",
	}
}

// policyOf is the error policy of a workload's clients.
func policyOf(workload string) connstate.ErrorPolicy {
	if workload == WorkloadSession {
		return connstate.SessionPolicy{}
	}
	return connstate.StandardPolicy{}
}

// endStateDeadline bounds each end-state wait: deletes are guaranteed but run
// in the background, and old sessions take a session timeout to expire.
const endStateDeadline = 60 * time.Second

// Run starts a three-node ensemble and cfg.Clients clients per workload
// (each through proxies of its own), runs the workers while it injects
// faults for cfg.Duration, then stops the workers, heals everything and
// checks the history and the end state. It returns the report; the error is
// for a run that could not be carried out (ZooKeeper missing, a server that
// would not restart), never for a violation, which the report lists.
// Everything it starts is closed before it returns. ctx ends the fault phase
// early.
func Run(ctx context.Context, cfg Config) (Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Report{}, err
	}
	st := cfg.SessionTimeout
	rep := Report{Seed: cfg.Seed, SessionTimeout: st, Bound: 2 * st}

	// gocurator and the beat writer build while the ensemble starts.
	tools := buildTools(ctx)
	defer tools.remove()
	ens, err := zktest.LaunchEnsemble(3)
	if err != nil {
		return rep, err
	}
	defer ens.Close()
	cfg.Logf("ensemble up: %s", ens.ConnectString())

	in := &injector{ens: ens, rng: rand.New(rand.NewSource(cfg.Seed)), st: st, logf: cfg.Logf}
	defer func() {
		for _, ps := range in.proxies {
			for _, p := range ps {
				p.Close()
			}
		}
	}()
	defer func() {
		for _, c := range in.clients {
			c.Close()
		}
	}()
	for _, wl := range Workloads {
		for i := 0; i < cfg.Clients; i++ {
			var ps []*zktest.Proxy
			var addrs []string
			for _, s := range ens.Servers() {
				p, err := zktest.ListenProxy(s.Addr())
				if err != nil {
					return rep, err
				}
				ps = append(ps, p)
				addrs = append(addrs, p.Addr())
			}
			in.proxies = append(in.proxies, ps)
			c, err := framework.Connect(ctx, strings.Join(addrs, ","),
				framework.WithSessionTimeout(st),
				framework.WithErrorPolicy(policyOf(wl)),
				framework.WithRetryPolicy(retry.BoundedExponentialBackoff(50*time.Millisecond, time.Second, 30)),
				framework.WithConnectionTimeout(2*st))
			if err != nil {
				return rep, fmt.Errorf("chaos: connect client %d (%s): %w", len(in.clients), wl, err)
			}
			in.clients = append(in.clients, c)
			in.workloads = append(in.workloads, wl)
		}
		ps := pathsOf(wl)
		for _, p := range []string{ps.resMutex, ps.resLong, ps.resSem, ps.resRW, ps.resCohort, ps.resRWCohort, ps.resElection} {
			if _, err := in.clients[0].Create(ctx, p, []byte("0"), framework.CreatingParents()); err != nil &&
				!errors.Is(err, zk.ErrNodeExists) {
				return rep, fmt.Errorf("chaos: create %s: %w", p, err)
			}
		}
	}

	in.observer, err = framework.Connect(ctx, ens.ConnectString(), framework.WithSessionTimeout(st),
		framework.WithRetryPolicy(retry.BoundedExponentialBackoff(50*time.Millisecond, time.Second, 30)),
		framework.WithConnectionTimeout(2*st))
	if err != nil {
		return rep, fmt.Errorf("chaos: connect the observer: %w", err)
	}
	defer in.observer.Close()
	x, err := newExecRunner(ctx, cfg, ens, tools)
	if err != nil {
		return rep, err
	}
	defer x.close()

	start := time.Now()
	queues, err := newQueueRunner(ctx, cfg, start, ens, tools)
	if err != nil {
		return rep, err
	}
	defer queues.close()
	rec := newRecorder(start, Workloads...)
	in.rec, x.rec = rec, rec
	wctx, stopWorkers := context.WithCancel(context.Background())
	defer stopWorkers()
	var wg sync.WaitGroup
	n := 0
	for i, c := range in.clients {
		wl := in.workloads[i]
		p := pathsOf(wl)
		sem := semaphore.New(c, p.sem, 2)
		win := &cutWindow{}
		in.windows = append(in.windows, win)
		// The reader and the writer are two RWLocks: one RWLock's read and
		// write locks may be held together (a downgrade).
		ma, mb, long := mutex.New(c, p.mutex), mutex.New(c, p.mutex), mutex.New(c, p.long)
		read, write := rwlock.New(c, p.rw).ReadLock(), rwlock.New(c, p.rw).WriteLock()
		ws := []*worker{
			{name: fmt.Sprintf("c%d-mutex-a", i), recipe: RecipeMutex, lock: p.mutex, resource: p.resMutex, acquire: lockerAcquire(ma)},
			{name: fmt.Sprintf("c%d-mutex-b", i), recipe: RecipeMutex, lock: p.mutex, resource: p.resMutex, acquire: lockerAcquire(mb)},
			{name: fmt.Sprintf("c%d-long", i), recipe: RecipeLongMutex, lock: p.long, resource: p.resLong, acquire: lockerAcquire(long)},
			{name: fmt.Sprintf("c%d-sem", i), recipe: RecipeSemaphore, lock: p.sem, resource: p.resSem, acquire: semaphoreAcquire(sem)},
			{name: fmt.Sprintf("c%d-read", i), recipe: RecipeRead, lock: p.rw, acquire: lockerAcquire(read)},
			{name: fmt.Sprintf("c%d-write", i), recipe: RecipeWrite, lock: p.rw, resource: p.resRW, acquire: lockerAcquire(write)},
		}
		probes := []probe{probeOf(ws[0].name, ma), probeOf(ws[1].name, mb), probeOf(ws[2].name, long),
			probeOf(ws[4].name, read), probeOf(ws[5].name, write)}
		// Three handles of the client share one node of the cohorted
		// mutex and hand the hold over locally, at most 3 times in a row.
		for _, h := range []string{"a", "b", "c"} {
			m := mutex.New(c, p.cohort, mutex.WithLocalHandover(3))
			name := fmt.Sprintf("c%d-cohort-%s", i, h)
			ws = append(ws, &worker{name: name, recipe: RecipeCohort, lock: p.cohort,
				resource: p.resCohort, acquire: lockerAcquire(m), window: win})
			probes = append(probes, probeOf(name, m))
		}
		// Two write lockers of the client share one node of the
		// cohorted read/write lock (at most 2 hand-overs in a row); a
		// plain reader queues among them.
		for _, h := range []string{"a", "b"} {
			l := rwlock.New(c, p.rwCohort, rwlock.WithLocalHandover(2)).WriteLock()
			name := fmt.Sprintf("c%d-cohort-write-%s", i, h)
			ws = append(ws, &worker{name: name, recipe: RecipeCohortWrite, lock: p.rwCohort,
				resource: p.resRWCohort, acquire: lockerAcquire(l)})
			probes = append(probes, probeOf(name, l))
		}
		cr := rwlock.New(c, p.rwCohort).ReadLock()
		ws = append(ws, &worker{name: fmt.Sprintf("c%d-cohort-read", i), recipe: RecipeRead, lock: p.rwCohort,
			acquire: lockerAcquire(cr)})
		probes = append(probes, probeOf(fmt.Sprintf("c%d-cohort-read", i), cr))
		in.probes = append(in.probes, probes)
		// Two participants of one election (latch layout) campaign, lead
		// for a few milliseconds to a session timeout, and resign.
		for _, h := range []string{"a", "b"} {
			name := fmt.Sprintf("c%d-elect-%s", i, h)
			ws = append(ws, &worker{name: name, recipe: RecipeElection, lock: p.election, resource: p.resElection,
				acquire: campaign(leader.New(c, p.election, leader.WithID(name)))})
		}
		for _, w := range ws {
			n++
			w.workload, w.client = wl, i
			w.c, w.rec, w.st = c, rec, st
			w.rng = rand.New(rand.NewSource(cfg.Seed + int64(n)))
			wg.Add(1)
			go func() {
				defer wg.Done()
				w.run(wctx)
			}()
		}
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		x.run(wctx)
	}()
	go func() {
		defer wg.Done()
		queues.run(wctx, in.clients, in.workloads, in.observer)
	}()
	counters, barriers := newCounterRunner(cfg.Logf), newBarrierRunner(start)
	in.leaving = barriers.leaving
	ghosts := newGhostRunner(start, st)
	go ghosts.checker(in.observer)
	for i, c := range in.clients {
		wg.Add(3)
		go func() { defer wg.Done(); counters.run(wctx, c, in.workloads[i], st) }()
		go func() {
			defer wg.Done()
			ghosts.run(wctx, c, in.observer, i, in.workloads[i], st, rand.New(rand.NewSource(cfg.Seed+int64(1000+i))))
		}()
		go func() { defer wg.Done(); barriers.run(wctx, c, i, in.workloads[i], cfg.Clients, st) }()
	}
	cfg.Logf("%d workers on %d clients (%d per workload: %v) and gocurator exec; faults for %v (seed %d)",
		n, len(in.clients), cfg.Clients, Workloads, cfg.Duration, cfg.Seed)

	faultErr := runFaults(ctx, cfg, in, rec, start.Add(cfg.Duration))
	stopWorkers()
	wg.Wait()
	end := time.Now()
	cfg.Logf("workers stopped after %v", end.Sub(start).Round(time.Second))
	healErr := in.healAll()

	h := rec.history(end)
	rep.fill(h, rec)
	rep.LostRepliesArmed, rep.LostRepliesFired = in.lostReplies()
	rep.Violations = Check(h, rep.Bound)
	rep.Overlaps = overlaps(rep.Violations)
	var cvs, bvs []Violation
	rep.Counter, cvs = counters.check(context.Background(), in.observer, start)
	rep.Barrier, bvs = barriers.stats(cfg.Clients)
	rep.Barrier.CutLeaves = in.cutLeaves
	var gvs []Violation
	rep.Ghost, gvs = ghosts.stats()
	bvs = append(bvs, gvs...)
	var qvs []Violation
	var qend EndCheck
	rep.Queue, qvs, qend = queues.check(context.Background(), in.observer)
	rep.Violations = append(append(append(rep.Violations, cvs...), bvs...), qvs...)
	rep.EndChecks = append(endState(in), qend)
	for _, c := range rep.EndChecks {
		if !c.OK {
			rep.Violations = append(rep.Violations, Violation{Kind: ViolationEndState, At: time.Since(start), Detail: c.Name + ": " + c.Detail})
		}
	}
	return rep, errors.Join(faultErr, healErr)
}

// runFaults injects faults until deadline (or ctx ends): each round is every
// kind once, shuffled by the seed (the first opens with cut-grant). After each heal it waits for the mutex to
// be acquired again and the election to have a new term (at most the
// progress bound), then for a quiet gap.
func runFaults(ctx context.Context, cfg Config, in *injector, rec *recorder, deadline time.Time) error {
	var round []string
	first := true
	for {
		sleep(ctx, in.between(2*time.Second, 4*time.Second))
		if ctx.Err() != nil || !time.Now().Before(deadline) {
			return nil
		}
		if len(round) == 0 {
			round = append([]string(nil), FaultKinds...)
			in.rng.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
			if first {
				// A short run has timed cuts too: the first round
				// opens with them.
				for i, k := range round {
					if k == FaultCutGrant {
						round[0], round[i] = round[i], round[0]
					}
				}
				first = false
			}
		}
		kind := round[0]
		round = round[1:]
		f, err := in.inject(kind)
		rec.fault(f)
		cfg.Logf("fault %s (%s): healed after %v", f.Kind, f.Detail, f.Heal.Sub(f.Start).Round(time.Millisecond))
		if err != nil {
			return err
		}
		limit := f.Heal.Add(2 * in.st)
		for !rec.progressSince(f.Heal) && time.Now().Before(limit) {
			sleep(ctx, 20*time.Millisecond)
		}
	}
}

// EndCheck is one check of the end state.
type EndCheck struct {
	Name   string
	OK     bool
	Detail string
}

func endState(in *injector) []EndCheck {
	var checks []EndCheck
	ctx, cancel := context.WithTimeout(context.Background(), endStateDeadline)
	connected := EndCheck{Name: "clients connected", OK: true, Detail: "all"}
	for i, c := range in.clients {
		if err := c.BlockUntilConnected(ctx); err != nil || !c.State().IsConnected() {
			connected.OK = false
			connected.Detail = fmt.Sprintf("client %d: %v (%v)", i, c.State(), err)
		}
	}
	cancel()
	checks = append(checks, connected)

	var paths []string
	for _, w := range Workloads {
		p := pathsOf(w)
		paths = append(paths, p.mutex, p.long, p.sem, p.sem+"/locks", p.sem+"/leases", p.rw, p.cohort, p.rwCohort, p.election)
	}
	paths = append(paths, execLock, execBeats)
	var left []string
	nodes := EndCheck{Name: "no lock nodes left"}
	nodes.OK = poll(endStateDeadline, func(ctx context.Context) bool {
		left = left[:0]
		for _, p := range paths {
			kids, _, err := in.observer.Children(ctx, p)
			if err != nil && !errors.Is(err, zk.ErrNoNode) {
				left = append(left, fmt.Sprintf("%s: %v", p, err))
				continue
			}
			if len(kids) > 0 {
				left = append(left, fmt.Sprintf("%s: %s", p, in.describe(ctx, p, kids)))
			}
		}
		return len(left) == 0
	})
	nodes.Detail = fmt.Sprintf("all %d paths empty", len(paths))
	if !nodes.OK {
		nodes.Detail = strings.Join(left, ", ")
	}
	checks = append(checks, nodes, barrierEmpty(in), ghostsEmpty(in))

	watches := EndCheck{Name: "no watches left"}
	counts := make([]string, len(in.ens.Servers()))
	watches.OK = poll(endStateDeadline, func(context.Context) bool {
		ok := true
		for i, s := range in.ens.Servers() {
			n, err := s.WatchCount()
			if err != nil {
				counts[i] = fmt.Sprintf("server %d: %v", s.ID(), err)
				ok = false
				continue
			}
			counts[i] = fmt.Sprintf("server %d: %d", s.ID(), n)
			ok = ok && n == 0
		}
		return ok
	})
	watches.Detail = strings.Join(counts, ", ")
	checks = append(checks, watches)

	// The clients again, after the checks above: each must still answer a
	// request (a Sync through its own connection), not only say it is
	// connected. One that stays unable to for the whole deadline is a
	// client wedged after every fault healed.
	answering := EndCheck{Name: "clients answer at the end"}
	var mute []string
	answering.OK = poll(endStateDeadline, func(ctx context.Context) bool {
		mute = mute[:0]
		for i, c := range in.clients {
			if err := c.Sync(ctx, "/"); err != nil {
				mute = append(mute, fmt.Sprintf("client %d: %v", i, err))
			}
		}
		return len(mute) == 0
	})
	answering.Detail = "all"
	if !answering.OK {
		answering.Detail = strings.Join(mute, "; ")
	}
	checks = append(checks, answering)
	for i, chk := range checks {
		if !chk.OK && chk.Name != connected.Name {
			// Say where the clients stand: a check that failed for want
			// of a connection is told from one that found nodes.
			checks[i].Detail += "; clients: " + clientStates(in.clients)
		}
	}
	return checks
}

// describe names the nodes kids of parent with their owners: the session
// that owns each ephemeral node and, when it is one of the run's clients,
// which one ("persistent" for a node no session owns).
func (in *injector) describe(ctx context.Context, parent string, kids []string) string {
	parts := make([]string, len(kids))
	for i, k := range kids {
		_, st, err := in.observer.Get(ctx, path.Join(parent, k))
		switch {
		case err != nil:
			parts[i] = fmt.Sprintf("%s (%v)", k, err)
		case st.EphemeralOwner == 0:
			parts[i] = k + " (persistent)"
		default:
			owner := fmt.Sprintf("session 0x%x", st.EphemeralOwner)
			for j, c := range in.clients {
				if c.SessionID() == st.EphemeralOwner {
					owner += fmt.Sprintf(", client %d", j)
				}
			}
			parts[i] = fmt.Sprintf("%s (%s, made %s ago)", k, owner,
				time.Since(time.UnixMilli(st.Ctime)).Round(time.Millisecond))
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// clientStates describes each client's connection: its state, session, and
// the state and server of its go-zookeeper connection.
func clientStates(clients []*framework.Client) string {
	parts := make([]string, len(clients))
	for i, c := range clients {
		conn := "no conn"
		if zc := c.Conn(); zc != nil {
			conn = fmt.Sprintf("%v via %s", zc.State(), zc.Server())
		}
		parts[i] = fmt.Sprintf("%d: %v 0x%x (%s)", i, c.State(), c.SessionID(), conn)
	}
	return strings.Join(parts, ", ")
}

// poll evaluates cond, a server-side condition, until it holds or d has
// passed. Each evaluation has a context of its own (at most 5s), so the last
// one before the deadline still reads the server: what a failed check
// reports is what was there, not a deadline that cut the reading short.
func poll(d time.Duration, cond func(ctx context.Context) bool) bool {
	deadline := time.Now().Add(d)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		ok := cond(ctx)
		cancel()
		if ok {
			return true
		}
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}
