// Command jobrunner is a small service that needs a lock and a semaphore.
// Run several copies of it, on one machine or many:
//
//   - One scheduler at a time, across all copies: whoever holds the mutex
//     at <root>/scheduler creates jobs under <root>/jobs. It writes every job
//     with a fenced transaction, so a scheduler that lost the lock cannot
//     write. It gives the lock up after each term, so the role moves between
//     processes.
//   - At most -k jobs running across all copies: a worker takes a lease of
//     the semaphore at <root>/slots, claims the oldest unclaimed job with an
//     ephemeral node under <root>/claims, runs it, deletes it, and returns
//     the lease.
//
// It prints who holds what, the fencing tokens, hand-overs and connection
// states. It stops cleanly on SIGINT or SIGTERM, or after -duration:
// it gives the jobs it is running back to the queue, releases what it
// holds, and closes its session.
//
//	go run ./examples/jobrunner -zk 127.0.0.1:2181 -id a -k 2
//	go run ./examples/jobrunner -zk 127.0.0.1:2181 -id b -k 2
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/retry"
)

type config struct {
	zk       string
	id       string
	k        int
	duration time.Duration
	root     string
	workers  int
	session  time.Duration
	term     time.Duration
	every    time.Duration
	jobTime  time.Duration
}

func main() {
	host, _ := os.Hostname()
	var cfg config
	flag.StringVar(&cfg.zk, "zk", "127.0.0.1:2181", "ZooKeeper connect string, host:port[,host:port...][/chroot]")
	flag.StringVar(&cfg.id, "id", fmt.Sprintf("%s-%d", host, os.Getpid()), "name of this process in the output and in its nodes")
	flag.IntVar(&cfg.k, "k", 2, "at most this many jobs run at once, across all processes")
	flag.DurationVar(&cfg.duration, "duration", 0, "stop after this long (0: run until SIGINT or SIGTERM)")
	flag.StringVar(&cfg.root, "root", "/jobrunner", "ZooKeeper path all copies share")
	flag.IntVar(&cfg.workers, "workers", 2, "worker goroutines in this process")
	flag.DurationVar(&cfg.session, "session", 10*time.Second, "session timeout asked of the server")
	flag.DurationVar(&cfg.term, "term", 4*time.Second, "how long a scheduler keeps the lock before handing it over")
	flag.DurationVar(&cfg.every, "every", 600*time.Millisecond, "how often the scheduler creates a job")
	flag.DurationVar(&cfg.jobTime, "job-time", 1500*time.Millisecond, "mean run time of a job")
	flag.Parse()
	if cfg.k < 1 || cfg.workers < 1 {
		fmt.Fprintln(os.Stderr, "jobrunner: -k and -workers must be at least 1")
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if cfg.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.duration)
		defer cancel()
	}
	if err := run(ctx, cfg); err != nil {
		say(cfg.id, "error: %v", err)
		os.Exit(1)
	}
}

// sessionNarrator returns a state listener that prints each state with the
// session it concerns. By the time a listener hears Lost the client has no
// session any more (SessionID is 0), so it remembers the session it last
// saw live, read with Session at Connected and at each Reconnected, and
// names that one as lost. (The listener gets only the state: a session
// that began and ended between two of its calls is never seen, and its
// Lost says the session is unknown.)
func sessionNarrator(id string, c *framework.Client) func(connstate.State) {
	last := c.Session() // Connected: read before Listen, as Connect returned
	return func(s connstate.State) {
		switch s {
		case connstate.Connected:
			// Printed by the caller.
		case connstate.Lost:
			if last == nil || last.ID() == 0 {
				say(id, "connection: Lost, session unknown (it ended before this listener saw it)")
			} else {
				say(id, "connection: Lost session 0x%x", last.ID())
			}
			last = nil
		case connstate.Reconnected:
			now := c.Session()
			switch {
			case now.ID() == 0:
				say(id, "connection: Reconnected, session lost again already")
			case last != nil && now.ID() == last.ID():
				say(id, "connection: Reconnected, same session 0x%x", now.ID())
			default:
				say(id, "connection: Reconnected, new session 0x%x", now.ID())
			}
			last = now
		default: // Suspended, ReadOnly: the session of the last connection
			var sid int64
			if last != nil {
				sid = last.ID()
			}
			say(id, "connection: %v, session 0x%x", s, sid)
		}
	}
}

// say prints one line: wall-clock time, process id, message. Lines from
// several processes can be merged and still read in order.
func say(id, format string, args ...any) {
	fmt.Printf("%s %-3s %s\n", time.Now().Format("15:04:05.000"), id, fmt.Sprintf(format, args...))
}

func run(ctx context.Context, cfg config) error {
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	c, err := framework.Connect(cctx, cfg.zk,
		framework.WithSessionTimeout(cfg.session),
		// Keep each call's retries short: the loops below try again anyway,
		// and a caller's ctx (or a lost hold) ends them sooner.
		framework.WithRetryPolicy(retry.BoundedExponentialBackoff(100*time.Millisecond, time.Second, 15)),
	)
	if err != nil {
		return err
	}
	say(cfg.id, "connection: Connected, session 0x%x, timeout %v", c.SessionID(), c.SessionTimeout())
	unlisten := c.Listen(sessionNarrator(cfg.id, c))

	r := &runner{cfg: cfg, c: c}
	if err := r.setup(ctx); err != nil {
		unlisten()
		_ = c.Close()
		return err
	}

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.scheduler(ctx)
	}()
	for i := range cfg.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.worker(ctx, fmt.Sprintf("%s/%d", cfg.id, i))
		}()
	}
	<-ctx.Done()
	say(cfg.id, "stopping: %v", context.Cause(ctx))
	wg.Wait()
	unlisten()
	// Close ends the session: any node we still have goes with it.
	if err := c.Close(); err != nil {
		return err
	}
	say(cfg.id, "stopped cleanly")
	return nil
}

type runner struct {
	cfg config
	c   *framework.Client
}

func (r *runner) path(p string) string { return r.cfg.root + p }

// setup creates the job queue and the scheduler's record, persistent nodes
// shared by every copy.
func (r *runner) setup(ctx context.Context) error {
	for _, p := range []string{"/jobs", "/claims", "/scheduler-record"} {
		_, err := r.c.Create(ctx, r.path(p), []byte{}, framework.CreatingParents())
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	return nil
}

// holdContext returns a context that ends when ctx ends or when the hold
// whose Done channel is done ends, so that calls made for the holder stop
// as soon as it is no longer the holder.
func holdContext(ctx context.Context, done <-chan struct{}) (context.Context, context.CancelFunc) {
	hctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-done:
			cancel()
		case <-hctx.Done():
		}
	}()
	return hctx, cancel
}

// pause waits d or until ctx ends, and reports whether ctx is still live.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// scheduler competes for the scheduler lock for as long as ctx lives.
func (r *runner) scheduler(ctx context.Context) {
	id := r.cfg.id
	m := mutex.New(r.c, r.path("/scheduler"), mutex.WithData([]byte(id)))
	for ctx.Err() == nil {
		if err := m.Acquire(ctx); err != nil {
			if ctx.Err() == nil {
				say(id, "scheduler: acquire failed: %v", err)
				pause(ctx, time.Second)
			}
			continue
		}
		r.schedule(ctx, m)
	}
}

// schedule is one term as scheduler.
func (r *runner) schedule(ctx context.Context, m *mutex.Mutex) {
	id := r.cfg.id
	token := m.FencingToken()
	hctx, cancel := holdContext(ctx, m.Done())
	defer cancel()

	say(id, "scheduler: acquired lock, fencing token %d", token)

	// Read what the previous scheduler recorded, then record ourselves. Both
	// the record and the jobs are written behind a check of our lock node
	// (FencedMulti): once the node is gone, the server refuses the write.
	prev, _, err := r.c.Get(hctx, r.path("/scheduler-record"))
	switch {
	case err != nil:
		say(id, "scheduler: reading the previous scheduler's record: %v", err)
	case len(prev) == 0:
		say(id, "scheduler: first scheduler on this path")
	default:
		say(id, "scheduler: hand-over from %s", prev)
	}
	record := framework.SetOp(r.path("/scheduler-record"), fmt.Appendf(nil, "%s, token %d", id, token), -1)
	if _, err := m.FencedMulti(hctx, record); err != nil {
		say(id, "scheduler: fenced write refused or failed: %v", err)
	}

	term := time.NewTimer(r.cfg.term)
	defer term.Stop()
	tick := time.NewTicker(r.cfg.every)
	defer tick.Stop()
	for {
		select {
		case <-m.Done():
			say(id, "scheduler: LOST the lock (token %d): %v; stop scheduling", token, m.Err())
			_ = m.Release(context.Background()) // returns ErrLockLost; resets the handle
			return
		case <-ctx.Done():
			r.release(m, token, "shutting down")
			return
		case <-term.C:
			r.release(m, token, "term over")
			return
		case <-tick.C:
			r.createJob(hctx, m, token)
		}
	}
}

func (r *runner) release(m *mutex.Mutex, token int64, why string) {
	rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.Release(rctx); err != nil {
		// The delete goes on in the background (guaranteed delete).
		say(r.cfg.id, "scheduler: release (token %d): %v", token, err)
		return
	}
	say(r.cfg.id, "scheduler: released lock (token %d): %s", token, why)
}

// createJob queues a job unless enough are waiting.
func (r *runner) createJob(ctx context.Context, m *mutex.Mutex, token int64) {
	jobs, _, err := r.c.Children(ctx, r.path("/jobs"))
	if err != nil || len(jobs) >= 2*r.cfg.k {
		return
	}
	data := fmt.Appendf(nil, "scheduled by %s, token %d", r.cfg.id, token)
	res, err := m.FencedMulti(ctx, framework.CreateOp(r.path("/jobs/job-"), data, framework.PersistentSequential))
	switch {
	case errors.Is(err, zk.ErrNoNode):
		say(r.cfg.id, "scheduler: fenced write REFUSED by the server: our lock node is gone")
	case err != nil:
		if ctx.Err() == nil {
			say(r.cfg.id, "scheduler: creating a job: %v", err)
		}
	default:
		say(r.cfg.id, "scheduler: queued %s (fenced by token %d)", shortName(res[0].String), token)
	}
}

// worker takes a lease, runs one job under it, returns the lease, and
// queues again, until ctx ends.
func (r *runner) worker(ctx context.Context, name string) {
	sem := semaphore.New(r.c, r.path("/slots"), r.cfg.k, semaphore.WithData([]byte(name)))
	for ctx.Err() == nil {
		lease, err := sem.Acquire(ctx)
		if err != nil {
			if ctx.Err() == nil {
				say(r.cfg.id, "worker %s: acquire a lease: %v", name, err)
				pause(ctx, time.Second)
			}
			continue
		}
		r.work(ctx, sem, lease, name)
	}
}

// work holds lease for one job.
func (r *runner) work(ctx context.Context, sem *semaphore.Semaphore, lease *semaphore.Lease, name string) {
	id := r.cfg.id
	lctx, cancel := holdContext(ctx, lease.Done())
	defer cancel()
	defer func() {
		rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := lease.Release(rctx)
		if err != nil && !errors.Is(err, semaphore.ErrLockLost) {
			say(id, "worker %s: returning the lease: %v", name, err)
		}
	}()
	say(id, "worker %s: got a lease (token %d); leases held now: %s", name, lease.FencingToken(), r.holders(lctx, sem))

	job, data, ok := r.claim(lctx, name)
	if !ok {
		if errors.Is(lease.Err(), semaphore.ErrLockLost) {
			say(id, "worker %s: LOST the lease while waiting for a job", name)
		}
		return
	}
	d := r.cfg.jobTime/2 + rand.N(r.cfg.jobTime)
	say(id, "worker %s: RUNNING %s (%s) for %v", name, job, data, d.Round(time.Millisecond))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		r.finish(job, name)
	case <-lease.Done():
		say(id, "worker %s: LOST the lease (%v): abandoning %s", name, lease.Err(), job)
		r.unclaim(job, name)
	case <-ctx.Done():
		say(id, "worker %s: shutting down: abandoning %s", name, job)
		r.unclaim(job, name)
	}
}

// claim waits for a job and claims the oldest unclaimed one by creating
// the ephemeral node <root>/claims/<job>. A claim dies with its session, so
// the job of a crashed worker becomes claimable again.
func (r *runner) claim(ctx context.Context, name string) (job string, data []byte, ok bool) {
	for {
		jobs, _, ch, err := r.c.ChildrenW(ctx, r.path("/jobs"))
		if err != nil {
			return "", nil, false
		}
		sort.Strings(jobs) // job-<10-digit sequence>: lexical is numeric here
		for _, j := range jobs {
			if !r.tryClaim(ctx, j, name) {
				continue
			}
			d, _, err := r.c.Get(ctx, r.path("/jobs/"+j))
			if err != nil { // finished by someone else just before our claim
				r.unclaim(j, name)
				continue
			}
			return j, d, true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return "", nil, false
		}
	}
}

// tryClaim creates the claim node of job. If the create's reply was lost
// and the retry found the node, the node's data and owner tell whether it
// is ours: the same session and this worker's name.
func (r *runner) tryClaim(ctx context.Context, job, name string) bool {
	p := r.path("/claims/" + job)
	_, err := r.c.Create(ctx, p, []byte(name), framework.WithMode(framework.Ephemeral))
	if err == nil {
		return true
	}
	if !errors.Is(err, zk.ErrNodeExists) {
		return false
	}
	d, stat, err := r.c.Get(ctx, p)
	return err == nil && stat.EphemeralOwner == r.c.SessionID() && string(d) == name
}

// finish deletes the job, then its claim.
func (r *runner) finish(job, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.c.Delete(ctx, r.path("/jobs/"+job), framework.Quietly()); err != nil {
		say(r.cfg.id, "worker %s: finished %s, but deleting it failed: %v", name, job, err)
	} else {
		say(r.cfg.id, "worker %s: finished %s", name, job)
	}
	r.unclaim(job, name)
}

// unclaim gives the job back to the queue. The delete is guaranteed: if the
// connection is down it goes on in the background, and if the session is
// lost the claim has gone with it.
func (r *runner) unclaim(job, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.c.Delete(ctx, r.path("/claims/"+job), framework.Guaranteed(), framework.Quietly())
}

// holders names the holders of the semaphore's leases: in the V1 layout
// the first k participants hold, the others wait.
func (r *runner) holders(ctx context.Context, sem *semaphore.Semaphore) string {
	ps, err := sem.Participants(ctx)
	if err != nil {
		return "?"
	}
	var names []string
	for i, p := range ps {
		if i == sem.MaxLeases() {
			break
		}
		if d, _, err := r.c.Get(ctx, p); err == nil {
			names = append(names, string(d))
		}
	}
	return fmt.Sprintf("[%s] (%d of at most %d, %d waiting)",
		strings.Join(names, " "), len(names), sem.MaxLeases(), max(0, len(ps)-sem.MaxLeases()))
}

func shortName(p string) string {
	_, name := framework.SplitPath(p)
	return name
}
