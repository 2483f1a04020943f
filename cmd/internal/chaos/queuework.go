package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/queue"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/zktest"
)

// queueRunner runs the queue workloads of every workload: a producer
// client (its own session, connected to the ensemble directly, with no
// retries, so that a put makes at most one item node: a retried create
// whose first reply was lost would queue an id twice) puts ids into the
// lock-safety queue and offers ids to the simple queue; every client of
// the workload consumes both (the queue by ConsumeFenced, the simple queue
// by Take), and so does a consumer process (qconsume) that is killed with
// SIGKILL every few seconds and started again. Once the producers stop, the
// consumers drain both queues; then the done markers on the server are
// judged against what the producers were told.
type queueRunner struct {
	start   time.Time
	st      time.Duration
	logf    func(string, ...any)
	seed    int64
	servers string // the ensemble, directly: producers and processes
	bin     string // the qconsume binary
	dir     string // for the processes' output
	prod    map[string]*framework.Client

	mu      sync.Mutex
	put     map[string]map[string]bool // workload -> queue id -> acknowledged (false: outcome unknown)
	offered map[string]map[string]bool // workload -> simple id -> acknowledged
	taken   map[string]map[string]int  // workload -> simple id -> takes
	stats   QueueStats
	drained bool          // both queues of every workload were empty before the consumers stopped
	drain   time.Duration // from the producers' stop to empty queues
}

// QueueStats sums up the queue workloads, by workload.
type QueueStats struct {
	Put        map[string]int // puts acknowledged
	PutUnknown map[string]int // puts that failed: the item may be queued or not
	Consumed   map[string]int // ids with a done marker on the server
	ByProcess  map[string]int // of which consumed by a consumer process
	Twice      map[string]int // ids with more than one done marker
	Lost       map[string]int // acknowledged puts without a done marker
	Handled    map[string]int // errors the consumers handled (lost items, fenced removals, retried reads)
	Starts     map[string]int // consumer processes started
	Kills      map[string]int // consumer processes killed with SIGKILL mid-run
	Exits      map[string]int // consumer processes that exited by themselves (see the log)

	Offered      map[string]int // simple queue: offers acknowledged
	OfferUnknown map[string]int // offers that failed
	Taken        map[string]int // ids taken
	TakenTwice   map[string]int // ids taken more than once
	SimpleLost   map[string]int // acknowledged offers never taken (at most once: allowed)

	Drain time.Duration // from the producers' stop until both queues were empty
}

func newQueueRunner(ctx context.Context, cfg Config, start time.Time, ens *zktest.Ensemble, t *tools) (*queueRunner, error) {
	if err := t.wait(); err != nil {
		return nil, err
	}
	r := &queueRunner{start: start, st: cfg.SessionTimeout, logf: cfg.Logf, seed: cfg.Seed, servers: ens.ConnectString(),
		bin: t.qconsume, dir: t.dir, prod: map[string]*framework.Client{},
		put: map[string]map[string]bool{}, offered: map[string]map[string]bool{}, taken: map[string]map[string]int{},
		stats: QueueStats{Put: map[string]int{}, PutUnknown: map[string]int{}, Consumed: map[string]int{},
			ByProcess: map[string]int{}, Twice: map[string]int{}, Lost: map[string]int{}, Handled: map[string]int{},
			Starts: map[string]int{}, Kills: map[string]int{}, Exits: map[string]int{}, Offered: map[string]int{},
			OfferUnknown: map[string]int{}, Taken: map[string]int{}, TakenTwice: map[string]int{}, SimpleLost: map[string]int{}}}
	for _, wl := range Workloads {
		r.put[wl], r.offered[wl], r.taken[wl] = map[string]bool{}, map[string]bool{}, map[string]int{}
		c, err := framework.Connect(ctx, r.servers, framework.WithSessionTimeout(r.st),
			framework.WithRetryPolicy(retry.NTimes(0, 0)), framework.WithConnectionTimeout(2*r.st))
		if err != nil {
			r.close()
			return nil, fmt.Errorf("chaos: connect the %s queue producer: %w", wl, err)
		}
		r.prod[wl] = c
		if _, err := c.Create(ctx, QueuePathsOf(wl).Done, nil, framework.CreatingParents()); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			r.close()
			return nil, fmt.Errorf("chaos: create the %s queue's done markers: %w", wl, err)
		}
	}
	return r, nil
}

func (r *queueRunner) close() {
	for _, c := range r.prod {
		c.Close()
	}
}

// run runs the workloads until ctx ends, then drains the queues and stops
// the consumers; clients[i] belongs to workloads[i].
func (r *queueRunner) run(ctx context.Context, clients []*framework.Client, workloads []string, observer *framework.Client) {
	cctx, stopConsumers := context.WithCancel(context.WithoutCancel(ctx))
	defer stopConsumers()
	var consumers, producers sync.WaitGroup
	for i, c := range clients {
		wl := workloads[i]
		consumers.Add(2)
		go func() { defer consumers.Done(); r.consume(cctx, c, wl, fmt.Sprintf("c%d", i)) }()
		go func() { defer consumers.Done(); r.take(cctx, c, wl) }()
	}
	for i, wl := range Workloads {
		producers.Add(3)
		rng := rand.New(rand.NewSource(r.seed + int64(2000+i)))
		prng := rand.New(rand.NewSource(r.seed + int64(3000+i)))
		go func() { defer producers.Done(); r.produce(ctx, wl, rng) }()
		go func() { defer producers.Done(); r.offer(ctx, wl) }()
		go func() { defer producers.Done(); r.processes(ctx, wl, prng) }()
	}
	producers.Wait()
	stop := time.Now()
	drained := poll(endStateDeadline, func(ctx context.Context) bool {
		for _, wl := range Workloads {
			p := QueuePathsOf(wl)
			for _, path := range []string{p.Items, p.Simple} {
				kids, _, err := observer.Children(ctx, path)
				if err != nil && !errors.Is(err, zk.ErrNoNode) || len(kids) > 0 {
					return false
				}
			}
		}
		return true
	})
	r.mu.Lock()
	r.drained, r.drain = drained, time.Since(stop)
	r.mu.Unlock()
	r.logf("queues drained %v after the producers stopped (all empty: %v)", r.drain.Round(time.Millisecond), drained)
	stopConsumers()
	consumers.Wait()
}

// handled counts an error a consumer of workload handled itself.
func (r *queueRunner) handled(wl string) func(error) {
	return func(error) {
		r.mu.Lock()
		r.stats.Handled[wl]++
		r.mu.Unlock()
	}
}

// consume runs an in-process fenced consumer until ctx ends.
func (r *queueRunner) consume(ctx context.Context, c *framework.Client, wl, name string) {
	for ctx.Err() == nil {
		err := ConsumeFenced(ctx, c, wl, name, r.handled(wl))
		if ctx.Err() == nil {
			r.logf("queue consumer %s (%s): %v", name, wl, err)
			sleep(ctx, 100*time.Millisecond)
		}
	}
}

// take takes from the simple queue until ctx ends and records each id.
func (r *queueRunner) take(ctx context.Context, c *framework.Client, wl string) {
	s := queue.NewSimple(c, QueuePathsOf(wl).Simple)
	for ctx.Err() == nil {
		tctx, cancel := context.WithTimeout(ctx, 3*r.st)
		data, err := s.Take(tctx)
		cancel()
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
				sleep(ctx, 20*time.Millisecond)
			}
			continue
		}
		r.mu.Lock()
		r.taken[wl][string(data)]++
		r.mu.Unlock()
	}
}

// produce puts ids into workload's queue until ctx ends, 60-140 ms apart,
// making each bucket of done markers before its first id.
func (r *queueRunner) produce(ctx context.Context, wl string, rng *rand.Rand) {
	c := r.prod[wl]
	p := QueuePathsOf(wl)
	q := queue.New(c, p.Items, queue.WithLockPath(p.Locks))
	r.feed(ctx, wl, 'q', func(pctx context.Context, n int, id string) (bool, error) {
		if n%markerBucket == 0 {
			// Until it exists, whatever the put's deadline: a consumer
			// cannot record an item without its bucket.
			bucket, _ := bucketOf(id)
			if !r.makeBucket(ctx, c, framework.JoinPath(p.Done, bucket)) {
				return false, nil
			}
		}
		return true, q.Put(pctx, []byte(id))
	}, func() time.Duration { return time.Duration(60+rng.Intn(80)) * time.Millisecond })
}

// offer offers ids to workload's simple queue until ctx ends, 100 ms
// apart.
func (r *queueRunner) offer(ctx context.Context, wl string) {
	s := queue.NewSimple(r.prod[wl], QueuePathsOf(wl).Simple)
	r.feed(ctx, wl, 's', func(ctx context.Context, _ int, id string) (bool, error) {
		return true, s.Offer(ctx, []byte(id))
	}, func() time.Duration { return 100 * time.Millisecond })
}

// feed is a producer's loop: ids of kind one after another, each put by
// put (false: stop, nothing put) under a deadline of three session
// timeouts and recorded as acknowledged or of unknown outcome, pause apart.
func (r *queueRunner) feed(ctx context.Context, wl string, kind byte, put func(context.Context, int, string) (bool, error),
	pause func() time.Duration) {
	acked, ok, unknown := r.put[wl], r.stats.Put, r.stats.PutUnknown
	if kind == 's' {
		acked, ok, unknown = r.offered[wl], r.stats.Offered, r.stats.OfferUnknown
	}
	for n := 0; ctx.Err() == nil; n++ {
		id := itemID(wl, kind, n)
		pctx, cancel := context.WithTimeout(ctx, 3*r.st)
		more, err := put(pctx, n, id)
		cancel()
		if !more {
			return
		}
		r.mu.Lock()
		acked[id] = err == nil
		if err == nil {
			ok[wl]++
		} else {
			unknown[wl]++
		}
		r.mu.Unlock()
		sleep(ctx, pause())
	}
}

// makeBucket creates a bucket of done markers, trying until it exists or
// ctx ends (false).
func (r *queueRunner) makeBucket(ctx context.Context, c *framework.Client, path string) bool {
	for ctx.Err() == nil {
		_, err := c.Create(ctx, path, nil)
		if err == nil || errors.Is(err, zk.ErrNodeExists) {
			return true
		}
		sleep(ctx, 50*time.Millisecond)
	}
	return false
}
