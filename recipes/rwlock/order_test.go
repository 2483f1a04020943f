package rwlock_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/rwlock"
)

// occupancy tracks who holds the lock in this process and fails on a
// writer overlapping anyone.
type occupancy struct {
	mu         sync.Mutex
	readers    int
	writer     bool
	maxReaders int
	violations []string
}

func (o *occupancy) enter(write bool, who string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.writer || (write && o.readers > 0) {
		o.violations = append(o.violations, fmt.Sprintf("%s (write %v) entered with writer %v, readers %d", who, write, o.writer, o.readers))
	}
	if write {
		o.writer = true
		return
	}
	o.readers++
	o.maxReaders = max(o.maxReaders, o.readers)
}

func (o *occupancy) leave(write bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if write {
		o.writer = false
	} else {
		o.readers--
	}
}

// Eight clients doing 200 random reads and writes each: a writer never
// overlaps anyone, and readers do overlap.
func TestMutualExclusion(t *testing.T) {
	const (
		clients = 8
		ops     = 200
	)
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	setup := testkit.Connect(t, zkAddr, ns)
	if _, err := setup.Create(ctx, "/data", []byte("0")); err != nil {
		t.Fatal(err)
	}
	var (
		occ      occupancy
		wg       sync.WaitGroup
		errs     = make(chan error, clients)
		writes   atomic.Int64
		tokens   sync.Map // fencing tokens of writers must be unique
		overlaps atomic.Int64
	)
	for i := 0; i < clients; i++ {
		c := testkit.Connect(t, zkAddr, ns)
		rw := rwlock.New(c, "/lock")
		rng := rand.New(rand.NewPCG(uint64(i), 42))
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- func() error {
				for op := 0; op < ops; op++ {
					write := rng.IntN(10) < 3
					k := rw.ReadLock()
					if write {
						k = rw.WriteLock()
					}
					if err := k.Acquire(ctx); err != nil {
						return fmt.Errorf("client %d op %d: acquire: %w", i, op, err)
					}
					occ.enter(write, fmt.Sprintf("client %d op %d", i, op))
					// A round trip inside the critical section, so that
					// holds last long enough to meet.
					if write {
						if _, loaded := tokens.LoadOrStore(k.FencingToken(), i); loaded {
							return fmt.Errorf("client %d: fencing token %d reused", i, k.FencingToken())
						}
						if _, err := k.FencedMulti(ctx, framework.SetOp("/data", []byte(fmt.Sprint(op)), -1)); err != nil {
							return fmt.Errorf("client %d: fenced write: %w", i, err)
						}
						writes.Add(1)
					} else {
						if _, _, err := c.Get(ctx, "/data"); err != nil {
							return err
						}
						occ.mu.Lock()
						if occ.readers > 1 {
							overlaps.Add(1)
						}
						occ.mu.Unlock()
					}
					occ.leave(write)
					if err := k.Release(ctx); err != nil {
						return fmt.Errorf("client %d op %d: release: %w", i, op, err)
					}
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	for _, v := range occ.violations {
		t.Error("exclusion violated:", v)
	}
	t.Logf("%d operations, %d writes, at most %d readers at once, %d reads overlapped",
		clients*ops, writes.Load(), occ.maxReaders, overlaps.Load())
	if occ.maxReaders < 2 {
		t.Errorf("readers never overlapped (at most %d at once)", occ.maxReaders)
	}
	if got := testkit.Children(t, setup, "/lock"); len(got) != 0 {
		t.Errorf("nodes left: %v", got)
	}
}

// A writer queued behind a continuous stream of readers gets the lock after
// the readers ahead of it and before every reader that came after it.
func TestWriterNotStarved(t *testing.T) {
	const readers = 4
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	setup := testkit.Connect(t, zkAddr, ns)

	type grant struct {
		seq   int32
		order int64
	}
	var (
		order    atomic.Int64 // orders grants and the writer's events
		mu       sync.Mutex
		grants   []grant
		holding  atomic.Int64
		started  = make(chan struct{})
		stop     = make(chan struct{})
		afterW   atomic.Int64 // reader grants after the writer released
		wRelease atomic.Int64
		wg       sync.WaitGroup
		errs     = make(chan error, readers)
	)
	wRelease.Store(-1)
	var startOnce sync.Once
	for i := 0; i < readers; i++ {
		c := testkit.Connect(t, zkAddr, ns)
		rw := rwlock.New(c, "/lock")
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- func() error {
				for n := 0; ; n++ {
					select {
					case <-stop:
						return nil
					default:
					}
					k := rw.ReadLock()
					if err := k.Acquire(ctx); err != nil {
						return err
					}
					holding.Add(1)
					g := grant{seq: seqOf(t, k.Node()), order: order.Add(1)}
					mu.Lock()
					grants = append(grants, g)
					mu.Unlock()
					if r := wRelease.Load(); r >= 0 && g.order > r && afterW.Add(1) == readers*2 {
						close(stop)
					}
					if n == 2 {
						startOnce.Do(func() { close(started) })
					}
					if _, _, err := c.Get(ctx, "/"); err != nil {
						return err
					}
					holding.Add(-1)
					if err := k.Release(ctx); err != nil {
						return err
					}
				}
			}()
		}()
	}

	testkit.WaitClosed(t, started, "the readers' third grants")
	wc := testkit.Connect(t, zkAddr, ns)
	w := rwlock.New(wc, "/lock")
	if err := w.WriteLock().Acquire(ctx); err != nil {
		t.Fatalf("writer starved: %v", err)
	}
	wAcquire := order.Add(1)
	if n := holding.Load(); n != 0 {
		t.Errorf("writer granted while %d readers hold", n)
	}
	// Hold across a round trip, and look again at its end: a reader let in
	// while the writer holds is seen, not only one that was in already.
	if _, _, err := wc.Get(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	if n := holding.Load(); n != 0 {
		t.Errorf("%d readers hold at the end of the writer's hold", n)
	}
	wseq := seqOf(t, w.WriteLock().Node())
	wRelease.Store(order.Add(1))
	if err := w.WriteLock().Release(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	var before, after int
	for _, g := range grants {
		switch {
		case g.seq < wseq && g.order > wAcquire:
			t.Errorf("reader %d, ahead of the writer %d, granted after it", g.seq, wseq)
		case g.seq > wseq && g.order < wRelease.Load():
			t.Errorf("reader %d, behind the writer %d, granted before it released", g.seq, wseq)
		case g.seq < wseq:
			before++
		default:
			after++
		}
	}
	t.Logf("%d reader grants ahead of the writer, %d after it", before, after)
	if before == 0 || after == 0 {
		t.Errorf("the writer was not inside the stream of readers (%d before, %d after)", before, after)
	}
	if got := testkit.Children(t, setup, "/lock"); len(got) != 0 {
		t.Errorf("nodes left: %v", got)
	}
}

// When a writer releases, the readers queued between it and the next writer
// wake, and nobody else: readers behind the next writer sleep on that one.
func TestHerd(t *testing.T) {
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	setup := testkit.Connect(t, zkAddr, ns)

	type party struct {
		name string
		c    *framework.Client
		rw   *rwlock.RWLock
		logs *observer.ObservedLogs
		wait <-chan error
	}
	newParty := func(name string) *party {
		core, logs := observer.New(zap.DebugLevel)
		c := testkit.Connect(t, zkAddr, ns, framework.WithLogger(zap.New(core)))
		return &party{name: name, c: c, rw: rwlock.New(c, "/lock"), logs: logs}
	}
	w1, ra, rb, w2, rc, rd := newParty("w1"), newParty("ra"), newParty("rb"), newParty("w2"), newParty("rc"), newParty("rd")
	if err := w1.rw.WriteLock().Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	for i, p := range []*party{ra, rb, w2, rc, rd} {
		k := p.rw.ReadLock()
		if p == w2 {
			k = p.rw.WriteLock()
		}
		p.wait = acquireAsync(ctx, k)
		waitChildren(t, setup, "/lock", i+2) // queue in this order
	}
	sorted, err := w1.rw.WriteLock().Participants(ctx)
	if err != nil || len(sorted) != 2 {
		t.Fatalf("write participants %v, %v", sorted, err)
	}
	w1node, w2node := "/"+ns+sorted[0], "/"+ns+sorted[1]
	readers, err := w1.rw.ReadLock().Participants(ctx)
	if err != nil || len(readers) != 4 {
		t.Fatalf("read participants %v, %v", readers, err)
	}
	ranode, rbnode := "/"+ns+readers[0], "/"+ns+readers[1]

	// Each waiter watches the node its driver names (P) and, unless P's
	// deletion alone grants it the lock, the node it would watch without P
	// (PP), besides its own node: ra and rb the first writer alone; the
	// second writer the reader just ahead of it and the one before; rc and
	// rd the second writer and the first. A waiter also watches its own
	// node (w1 holds without having waited).
	testkit.Eventually(t, "watches set", func() bool {
		w := watchers(t)
		return sameSessions(w[w1node], ra.c.SessionID(), rb.c.SessionID(), rc.c.SessionID(), rd.c.SessionID()) &&
			sameSessions(w[ranode], w2.c.SessionID(), ra.c.SessionID()) &&
			sameSessions(w[rbnode], w2.c.SessionID(), rb.c.SessionID()) &&
			sameSessions(w[w2node], rc.c.SessionID(), rd.c.SessionID(), w2.c.SessionID())
	})

	if err := w1.rw.WriteLock().Release(ctx); err != nil {
		t.Fatal(err)
	}
	mustAcquired(t, ra.wait, "ra")
	mustAcquired(t, rb.wait, "rb")
	pending(t, w2.wait, "w2 behind ra and rb")
	for _, p := range []*party{ra, rb} {
		if err := p.rw.ReadLock().Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	mustAcquired(t, w2.wait, "w2")
	pending(t, rc.wait, "rc behind w2")
	pending(t, rd.wait, "rd behind w2")
	// rc and rd looked again at the first writer's release (their PP), off
	// the critical path, but their watches on the second writer never
	// fired.
	for _, p := range []*party{rc, rd} {
		if n := p.logs.FilterMessage("watch fired").Len(); n != 0 {
			t.Errorf("%s woke %d times before the writer ahead of it released (herd)", p.name, n)
		}
	}
	if err := w2.rw.WriteLock().Release(ctx); err != nil {
		t.Fatal(err)
	}
	mustAcquired(t, rc.wait, "rc")
	mustAcquired(t, rd.wait, "rd")
	for _, p := range []*party{ra, rb, w2, rc, rd} {
		n := p.logs.FilterMessage("watch fired").Len()
		// w2 may find itself first when it lists again after the reader
		// before its predecessor went: then its own watch never fires.
		if n != 1 && !(p == w2 && n == 0) {
			t.Errorf("%s woke %d times, want once", p.name, n)
		}
	}
	for _, p := range []*party{rc, rd} {
		if err := p.rw.ReadLock().Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Every watch fired; none of the test's sessions has one left on the
	// server (pitfall 9). Counted per session (wchc), not server-wide, so
	// other tests on the package's server cannot disturb the count.
	testkit.Eventually(t, "no watches left", func() bool {
		return testkit.WatchCount(t, zkAddr, setup, w1.c, ra.c, rb.c, w2.c, rc.c, rd.c) == 0
	})
}
