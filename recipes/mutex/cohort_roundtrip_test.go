package mutex_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/zktest"
)

// The hand-over between processes at the end of a local streak: the
// cohort's next node is created in the same transaction as its old node's
// delete, so the waiter of another process that watches the old node is
// granted one round trip after the release (the transaction's), not two
// (a create, then a delete). Counted, not timed: the requests each client
// makes (opRecorder), and the zxids the server gave the transaction.
func TestLocalHandoverBoundOneTransaction(t *testing.T) {
	t.Run("one transaction, no request of the next holder", func(t *testing.T) { testBoundOneTransaction(t) })
	t.Run("lost reply to the transaction must not leave a second node", func(t *testing.T) { testBoundLostReply(t, false) })
	t.Run("waiter leaving as the transaction's reply is lost leaves no node", func(t *testing.T) { testBoundLostReply(t, true) })
	t.Run("fairness bound, 2 processes x 8, RTT 0", func(t *testing.T) { testBoundFairness(t, 0) })
	t.Run("fairness bound, 2 processes x 8, RTT 2 ms", func(t *testing.T) { testBoundFairness(t, 1) })
}

// boundSetup is a cohort of process A at the end of its streak (max 1):
// h2 holds, handed the node by h1, h3 waits in A's local queue, and B's
// handle waits in the ZooKeeper queue behind A's node with its watches
// set. Every holder keeps a marker node for its whole hold (the exclusion
// evidence; B's is made by the test once B holds).
type boundSetup struct {
	a, b, obs  *framework.Client
	h2, h3     *mutex.Mutex
	other      *mutex.Mutex
	old, bNode string     // A's node, B's node (paths)
	h3Got      chan error // h3's Acquire
	bGot       chan error // B's Acquire
	h3Cancel   context.CancelFunc
}

const boundMarker = "/marker"

func newBoundSetup(t *testing.T, aAddr string, aOpts, bOpts []framework.Option) *boundSetup {
	t.Helper()
	ns := testkit.Unique(t)
	ctx := testkit.Ctx(t)
	s := &boundSetup{
		a:     testkit.Connect(t, aAddr, ns, aOpts...),
		b:     testkit.Connect(t, zkAddr, ns, bOpts...),
		obs:   testkit.Connect(t, zkAddr, ns),
		h3Got: make(chan error, 1),
		bGot:  make(chan error, 1),
	}
	h1 := mutex.New(s.a, lockPath, mutex.WithLocalHandover(1))
	s.h2 = mutex.New(s.a, lockPath, mutex.WithLocalHandover(1))
	s.h3 = mutex.New(s.a, lockPath, mutex.WithLocalHandover(1))
	if err := h1.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	s.old = h1.Node()
	h2Got := make(chan error, 1)
	go func() { h2Got <- s.h2.Acquire(ctx) }()
	testkit.Eventually(t, "h2 queued locally", func() bool { return s.h2.LocalWaiters() == 1 })
	s.other = mutex.New(s.b, lockPath)
	go func() { s.bGot <- s.other.Acquire(ctx) }()
	testkit.Eventually(t, "B queued", func() bool { return len(testkit.Children(t, s.obs, lockPath)) == 2 })
	for _, n := range testkit.Children(t, s.obs, lockPath) {
		if p := lockPath + "/" + n; p != s.old {
			s.bNode = p
		}
	}
	testkit.AwaitWatch(t, zkAddr, s.b, s.old)
	testkit.AwaitWatch(t, zkAddr, s.b, s.bNode)
	if err := h1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-h2Got; err != nil {
		t.Fatal(err)
	}
	if s.h2.Node() != s.old {
		t.Fatalf("h2 holds %s, want the local hand-over of %s", s.h2.Node(), s.old)
	}
	if _, err := s.h2.FencedMulti(ctx, framework.CreateOp(boundMarker, nil, framework.Ephemeral)); err != nil {
		t.Fatalf("h2's marker: %v", err)
	}
	h3ctx, cancel := context.WithCancel(ctx)
	s.h3Cancel = cancel
	t.Cleanup(cancel)
	go func() { s.h3Got <- s.h3.Acquire(h3ctx) }()
	testkit.Eventually(t, "h3 queued locally", func() bool { return s.h3.LocalWaiters() == 1 })
	return s
}

// bGranted waits for B's grant.
func (s *boundSetup) bGranted(t *testing.T) {
	t.Helper()
	if err := <-s.bGot; err != nil {
		t.Fatal(err)
	}
}

// bMarker makes B's marker, which fails if a holder of A still has its
// own.
func (s *boundSetup) bMarker(t *testing.T) {
	t.Helper()
	if _, err := s.other.FencedMulti(testkit.Ctx(t), framework.CreateOp(boundMarker, nil, framework.Ephemeral)); err != nil {
		t.Fatalf("B's marker: %v", err)
	}
}

// aNodes returns A's nodes in the lock's directory, as the server lists them.
func (s *boundSetup) aNodes(t *testing.T) []string {
	t.Helper()
	var nodes []string
	for _, n := range testkit.Children(t, s.obs, lockPath) {
		p := lockPath + "/" + n
		st, err := s.obs.Exists(testkit.Ctx(t), p)
		if err != nil {
			t.Fatal(err)
		}
		if st != nil && st.EphemeralOwner == s.a.SessionID() {
			nodes = append(nodes, p)
		}
	}
	return nodes
}

// oneTransaction checks, on the server, that A's node next made and the
// old node's delete were one transaction: the directory's last change of
// children (pzxid) is the next node's creation (czxid), and there were
// exactly two changes since cversion0. A create and then a delete would
// leave the delete's zxid there, greater than the create's.
func (s *boundSetup) oneTransaction(t *testing.T, next string, cversion0 int32) {
	t.Helper()
	ctx := testkit.Ctx(t)
	dir, err := s.obs.Exists(ctx, lockPath)
	if err != nil || dir == nil {
		t.Fatalf("lock directory: %v, %v", dir, err)
	}
	st, err := s.obs.Exists(ctx, next)
	if err != nil || st == nil {
		t.Fatalf("A's next node %s: %v, %v", next, st, err)
	}
	if dir.Cversion != cversion0+2 {
		t.Errorf("directory's cversion %d, want %d: one create and one delete since the release", dir.Cversion, cversion0+2)
	}
	if dir.Pzxid != st.Czxid {
		t.Errorf("directory's last child change at zxid %#x, A's next node made at %#x: the old node's delete was a transaction of its own", dir.Pzxid, st.Czxid)
	}
}

// finish lets B go, checks that h3 (waiting behind B) holds with A's next
// node, and that nothing is left.
func (s *boundSetup) finish(t *testing.T, next string) {
	t.Helper()
	ctx := testkit.Ctx(t)
	if s.h3.IsHeld() {
		t.Fatal("h3 holds beside B")
	}
	if err := s.b.Delete(ctx, boundMarker); err != nil {
		t.Fatal(err)
	}
	if err := s.other.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if next != "" {
		if err := <-s.h3Got; err != nil {
			t.Fatal(err)
		}
		if s.h3.Node() != next {
			t.Errorf("h3 holds %s, want A's next node %s", s.h3.Node(), next)
		}
		if err := s.h3.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Eventually(t, "no lock node left", func() bool { return len(testkit.Children(t, s.obs, lockPath)) == 0 })
}

// The streak's end costs the next holder one round trip: A's release sends
// one request, the transaction, before its old node is gone, and B, which
// watches that node, holds with no request of its own. A's reads of its
// next node (its Stat, the listing, its watches) follow, off that path.
func testBoundOneTransaction(t *testing.T) {
	recA, recB := &opRecorder{}, &opRecorder{}
	s := newBoundSetup(t, zkAddr, []framework.Option{framework.WithMeterProvider(recA)},
		[]framework.Option{framework.WithMeterProvider(recB)})
	dir, err := s.obs.Exists(testkit.Ctx(t), lockPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.a.Delete(testkit.Ctx(t), boundMarker); err != nil {
		t.Fatal(err)
	}
	fromA, fromB := recA.mark(), recB.mark()
	if err := s.h2.Release(testkit.Ctx(t)); err != nil {
		t.Fatal(err)
	}
	s.bGranted(t)
	if ops := recB.since(fromB); len(ops) != 0 {
		t.Errorf("B's requests between A's release and its grant: %v, want none (granted by its watch)", ops)
	}
	s.bMarker(t)
	next := s.aNodes(t)
	if len(next) != 1 || next[0] == s.old || !framework.IsProtected(next[0][len(lockPath)+1:]) {
		t.Fatalf("A's nodes %v, want one protected node other than %s", next, s.old)
	}
	// A waits behind B: its watch on B's node is set, the last request of
	// the hand-over.
	testkit.AwaitWatch(t, zkAddr, s.a, s.bNode)
	ops := recA.since(fromA)
	if w := writes(ops); !slices.Equal(w, []string{"multi"}) || ops[0] != "multi" {
		t.Errorf("A's requests from its release until it waits behind B: %v; want the transaction first and as the only write", ops)
	}
	t.Logf("A's requests for the hand-over: %v (the first one on B's path); B's: none", ops)
	s.oneTransaction(t, next[0], dir.Cversion)
	s.finish(t, next[0])
}

// A lost reply to the transaction: the server applied it (A's next node
// made, the old one deleted) and closed the connection. The cohort finds
// its node by its protected id after the reconnect: one node of A, never
// two, B holds, then h3 with that node. With leave, h3 gives up as the
// reply is lost, so nobody here wants the node: it must not stay.
func testBoundLostReply(t *testing.T, leave bool) {
	proxy := zktest.NewProxy(t, zkAddr)
	s := newBoundSetup(t, proxy.Addr(), nil, nil)
	dir, err := s.obs.Exists(testkit.Ctx(t), lockPath)
	if err != nil {
		t.Fatal(err)
	}
	fired := proxy.LoseNextMultiReply() // h2's marker is made already
	released := make(chan error, 1)
	go func() {
		if err := s.a.Delete(testkit.Ctx(t), boundMarker); err != nil {
			released <- err
			return
		}
		released <- s.h2.Release(testkit.Ctx(t))
	}()
	testkit.WaitClosed(t, fired, "the transaction's reply lost")
	if leave {
		s.h3Cancel()
		if err := <-s.h3Got; !errors.Is(err, context.Canceled) {
			t.Fatalf("h3: %v, want context.Canceled", err)
		}
	}
	if err := <-released; err != nil {
		t.Fatalf("h2's release: %v", err)
	}
	s.bGranted(t)
	s.bMarker(t)
	if leave {
		testkit.Eventually(t, "A's node gone with its last waiter", func() bool { return len(s.aNodes(t)) == 0 })
		s.finish(t, "")
		return
	}
	next := s.aNodes(t)
	if len(next) != 1 || next[0] == s.old {
		t.Fatalf("A's nodes after the lost reply: %v, want one node other than %s", next, s.old)
	}
	s.oneTransaction(t, next[0], dir.Cversion)
	testkit.AwaitWatch(t, zkAddr, s.a, s.bNode)
	if got := s.aNodes(t); !slices.Equal(got, next) {
		t.Fatalf("A's nodes once it waits: %v, want %v", got, next)
	}
	s.finish(t, next[0])
}

// 2 processes x 8 handles, both cohorted with max 4, each through a proxy
// with a one-way delay of delayMs (RTT 2 ms for 1): no process holds more
// than max+1 = 5 times in a row while the other has waiters (all do here),
// every holder keeps a marker node for its whole hold, and the processes
// hand the lock to each other through the transaction.
func testBoundFairness(t *testing.T, delayMs int) {
	ns := testkit.Unique(t)
	const clients, perClient, max, total, warmup = 2, 8, 4, 600, 40
	cs := make([]*framework.Client, clients)
	recs := make([]*opRecorder, clients)
	for i := range cs {
		proxy := zktest.NewProxy(t, zkAddr)
		proxy.SetDelay(time.Duration(delayMs) * time.Millisecond)
		recs[i] = &opRecorder{}
		cs[i] = testkit.Connect(t, proxy.Addr(), ns, framework.WithMeterProvider(recs[i]))
	}
	order := holdOrder(t, cs, perClient, max, total)
	longest, runs := longestRun(order, warmup, total)
	if longest > max+1 {
		t.Errorf("one process held %d times in a row, want at most max+1 = %d", longest, max+1)
	}
	var counts []string
	multis := 0
	for i, r := range recs {
		ops := r.since(0)
		n := map[string]int{}
		for _, op := range writes(ops) {
			n[op]++
		}
		multis += n["multi"]
		counts = append(counts, fmt.Sprintf("process %d: %d transactions, %d creates, %d deletes", i, n["multi"], n["create"], n["delete"]))
	}
	// Every hold's marker is a transaction too (FencedMulti).
	if handovers := multis - len(order); handovers < runs/2 {
		t.Errorf("%d transactions besides the markers' for %d runs: the processes did not hand over through the transaction", handovers, runs)
	}
	t.Logf("%d holds after the warm-up, %d runs, longest run %d (bound %d); %v", total-warmup, runs, longest, max+1, counts)
	obs := testkit.Connect(t, zkAddr, ns)
	testkit.Eventually(t, "no lock node left", func() bool { return len(testkit.Children(t, obs, lockPath)) == 0 })
}

// writes returns the write requests among ops, in order.
func writes(ops []string) []string {
	var w []string
	for _, op := range ops {
		switch op {
		case "create", "delete", "set", "multi":
			w = append(w, op)
		}
	}
	return w
}

// opRecorder records, in order, the operation of every request a client
// makes, from the framework's request-duration histogram (its
// curator.operation attribute): requests counted on the client, no SDK.
type opRecorder struct {
	metricnoop.MeterProvider
	mu  sync.Mutex
	ops []string
}

func (p *opRecorder) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	return opMeter{Meter: metricnoop.NewMeterProvider().Meter(name, opts...), p: p}
}

// mark returns the number of requests recorded so far, for since.
func (p *opRecorder) mark() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ops)
}

// since returns the requests recorded after mark m.
func (p *opRecorder) since(m int) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.ops[m:])
}

type opMeter struct {
	metric.Meter
	p *opRecorder
}

func (m opMeter) Float64Histogram(name string, opts ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	h, err := m.Meter.Float64Histogram(name, opts...)
	if name != "curator.client.request.duration" {
		return h, err
	}
	return opHistogram{Float64Histogram: h, p: m.p}, err
}

type opHistogram struct {
	metric.Float64Histogram
	p *opRecorder
}

func (h opHistogram) Record(_ context.Context, _ float64, opts ...metric.RecordOption) {
	attrs := metric.NewRecordConfig(opts).Attributes()
	op, _ := attrs.Value("curator.operation")
	h.p.mu.Lock()
	h.p.ops = append(h.p.ops, op.AsString())
	h.p.mu.Unlock()
}
