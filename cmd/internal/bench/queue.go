package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gocurator/curator/cmd/internal/javabench"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/queue"
)

// The queue rows' modes (curatorbench -queue).
const (
	// QueuePlain is DistributedQueue without a lock path (at most once:
	// the consumer deletes the item, then handles it).
	QueuePlain = "queue"
	// QueueLocked is DistributedQueue with a lock path (Curator's
	// lock-safety mode: lock, handle, then delete).
	QueueLocked = "queue-lock"
	// QueueSimple is SimpleDistributedQueue (Offer, Take).
	QueueSimple = "simple"
)

// QueueModes lists the modes, in the order the rows run.
var QueueModes = []string{QueuePlain, QueueLocked, QueueSimple}

// QueueSettings are the queue rows' settings.
type QueueSettings struct {
	// Producers and Consumers are clients (sessions) each; a producer puts
	// one item at a time, a consumer handles one at a time.
	Producers int `json:"producers"`
	Consumers int `json:"consumers"`
	// Items is how many items each producer puts per run, after a tenth
	// as many unmeasured.
	Items int `json:"items"`
	// Rate paces the producers: items per second, all together; 0: each
	// puts its next item as soon as its put returns.
	Rate float64 `json:"rate,omitempty"`
}

// ErrQueueSettings is returned by CheckQueueSettings.
var ErrQueueSettings = errors.New("-queue-producers, -queue-consumers and -queue-items must be positive (-queue-rate not negative)")

// CheckQueueSettings refuses counts below one.
func CheckQueueSettings(s QueueSettings) error {
	if s.Producers < 1 || s.Consumers < 1 || s.Items < 1 || s.Rate < 0 {
		return ErrQueueSettings
	}
	return nil
}

// QueueResult is one run of one queue mode by one implementation at one
// round-trip time.
type QueueResult struct {
	Impl  string  `json:"impl"`
	Mode  string  `json:"mode"`
	RTTMs float64 `json:"rtt_ms"`
	// ItemsPerSec is the measured items over the time from the first put
	// to the last item's consumption.
	ItemsPerSec float64 `json:"items_per_sec"`
	// P50Ms and P99Ms are put-to-consume latencies: from the producer's
	// call to put (its time carried in the item) to the consumer's
	// function receiving the item (Take returning it).
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
	// Reads and Writes are the requests the server answered per item
	// (mntr), the warm-up and the sessions' creation included; -1 when
	// mntr could not be read.
	Reads  float64 `json:"reads_per_item"`
	Writes float64 `json:"writes_per_item"`
	// OpsPerItem is the server's request trace over the run, by request
	// type, per item (-queue-trace only: the trace slows the server).
	OpsPerItem map[string]float64 `json:"ops_per_item,omitempty"`
	Error      string             `json:"error,omitempty"`
	// RoundsItems holds every round's rate when the row is the median of
	// several rounds.
	RoundsItems []float64 `json:"rounds_items_per_sec,omitempty"`
}

// RTTsPerItem is the time one consumer spends per item in round trips of
// rttMs: Consumers / items per second, over the round trip.
func (r QueueResult) RTTsPerItem(consumers int, rttMs float64) (float64, bool) {
	if r.Error != "" || rttMs <= 0 || r.ItemsPerSec <= 0 {
		return 0, false
	}
	return float64(consumers) / r.ItemsPerSec * 1000 / rttMs, true
}

// QueueTable is the queue rows at one round-trip time.
type QueueTable struct {
	RTTMs         float64       `json:"rtt_ms"`
	MeasuredRTTMs float64       `json:"measured_rtt_ms"`
	LoadAvg       string        `json:"load_avg,omitempty"`
	Rows          []QueueResult `json:"rows"`
}

// QueueReport is what -queue measured.
type QueueReport struct {
	Settings QueueSettings `json:"settings"`
	Tables   []QueueTable  `json:"tables"`
}

// RunQueueRounds runs the queue rows through servers, ours and, when
// curator is set, Curator's, rounds times interleaved (each mode Go then
// Curator), and returns the table of the medians. server is the server
// whose mntr counts the requests; trace, when not nil, counts them by type
// over every run. The paths are under /curatorbench.
func RunQueueRounds(ctx context.Context, servers, server string, trace *OpTrace, s QueueSettings, modes []string, rounds int,
	rtt, measured time.Duration, curator bool, logf func(string, ...any)) (QueueTable, error) {
	t := QueueTable{RTTMs: ms(rtt), MeasuredRTTMs: ms(measured), LoadAvg: LoadAvg()}
	var all []QueueResult
	for round := range rounds {
		if rounds > 1 {
			logf("queue, RTT %v: round %d of %d", rtt, round+1, rounds)
		}
		for _, mode := range modes {
			runs := []func(context.Context, string, string, string, string, QueueSettings) (QueueResult, error){RunOurQueue}
			if curator {
				runs = append(runs, RunCuratorQueue)
			}
			for _, run := range runs {
				base := fmt.Sprintf("/curatorbench/queue-%d", time.Now().UnixNano())
				terr := errors.New("no trace")
				if trace != nil {
					terr = trace.Start()
				}
				r, err := run(ctx, servers, server, base, mode, s)
				if terr == nil {
					ops, serr := trace.Stop()
					if serr == nil && err == nil {
						r.OpsPerItem = perItem(ops, (s.Items+max(s.Items/10, 1))*s.Producers)
					}
				}
				r.RTTMs = ms(rtt)
				if err != nil {
					r.Error = err.Error()
					logf("queue %s %s, RTT %v: FAILED: %v", mode, r.Impl, rtt, firstLine(err.Error()))
				} else {
					logf("queue %s %s, RTT %v: %.0f items/s, p50 %.2f ms, p99 %.2f ms (%.2f reads, %.2f writes per item)",
						mode, r.Impl, rtt, r.ItemsPerSec, r.P50Ms, r.P99Ms, r.Reads, r.Writes)
				}
				all = append(all, r)
				if err := ctx.Err(); err != nil {
					t.Rows = MedianQueue(all)
					return t, err
				}
			}
		}
	}
	t.Rows = MedianQueue(all)
	return t, nil
}

// perItem divides the request counts by the items of a run.
func perItem(ops map[string]int64, items int) map[string]float64 {
	out := make(map[string]float64, len(ops))
	for op, n := range ops {
		out[op] = float64(n) / float64(items)
	}
	return out
}

// queueItemSize is an item's size: the put time (ns since the run's base
// time, big-endian) and the producer and index (for a reader's eye).
const queueItemSize = 16

func encodeQueueItem(sent time.Duration, producer, i int) []byte {
	b := make([]byte, queueItemSize)
	binary.BigEndian.PutUint64(b, uint64(sent))
	binary.BigEndian.PutUint32(b[8:], uint32(producer))
	binary.BigEndian.PutUint32(b[12:], uint32(i))
	return b
}

func decodeQueueSent(b []byte) (time.Duration, error) {
	if len(b) != queueItemSize {
		return 0, fmt.Errorf("queue item of %d bytes, want %d", len(b), queueItemSize)
	}
	return time.Duration(binary.BigEndian.Uint64(b)), nil
}

// queueSink collects one phase's consumptions: latencies, the last
// consumption's time, and a channel closed when want items came.
type queueSink struct {
	mu   sync.Mutex
	base time.Time
	want int
	lat  []time.Duration
	last time.Duration
	done chan struct{}
	err  error
}

func newQueueSink(base time.Time, want int) *queueSink {
	return &queueSink{base: base, want: want, lat: make([]time.Duration, 0, want), done: make(chan struct{})}
}

// add records an item consumed now; more items than wanted fail the run
// (no faults here: every mode delivers each item once).
func (s *queueSink) add(data []byte) {
	now := time.Since(s.base)
	sent, err := decodeQueueSent(data)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err != nil:
		s.err = err
	case len(s.lat) >= s.want:
		s.err = fmt.Errorf("consumed more than the %d items put", s.want)
	default:
		s.lat = append(s.lat, now-sent)
		s.last = now
		if len(s.lat) == s.want {
			close(s.done)
		}
	}
}

// queueTimeout bounds one phase, so a broken queue cannot hang a run.
const queueTimeout = 2 * time.Minute

// RunOurQueue measures recipes/queue in mode under base: s.Producers
// clients put, s.Consumers clients consume (Consume, or Take for the simple
// queue), a tenth of the items unmeasured first. server's mntr counts the
// requests.
func RunOurQueue(ctx context.Context, servers, server, base, mode string, s QueueSettings) (QueueResult, error) {
	r := QueueResult{Impl: ImplOurs, Mode: mode, Reads: -1, Writes: -1}
	if !slices.Contains(QueueModes, mode) {
		return r, fmt.Errorf("queue mode %q: one of %v", mode, QueueModes)
	}
	c0, cerr := ReadServerCounters(server)
	cs := make([]*framework.Client, s.Producers+s.Consumers)
	defer func() {
		for _, c := range cs {
			if c != nil {
				c.Close()
			}
		}
	}()
	for i := range cs {
		c, err := Connect(ctx, servers)
		if err != nil {
			return r, err
		}
		cs[i] = c
	}
	producers, consumers := cs[:s.Producers], cs[s.Producers:]
	path := base + "/q"
	var opts []queue.Option
	if mode == QueueLocked {
		opts = append(opts, queue.WithLockPath(base+"/locks"))
	}
	put := func(c *framework.Client) func(context.Context, []byte) error {
		if mode == QueueSimple {
			return queue.NewSimple(c, path).Offer
		}
		return queue.New(c, path, opts...).Put
	}
	// The consumers run through both phases; sink is the phase's.
	base0 := time.Now()
	var mu sync.Mutex
	var sink *queueSink
	consumed := func(data []byte) {
		mu.Lock()
		k := sink
		mu.Unlock()
		k.add(data)
	}
	cctx, stop := context.WithCancel(ctx)
	g, gctx := errgroup.WithContext(cctx)
	for _, c := range consumers {
		g.Go(func() error { return consumeQueue(gctx, c, path, mode, opts, consumed) })
	}
	phase := func(n int) (*queueSink, error) {
		k := newQueueSink(base0, n*s.Producers)
		mu.Lock()
		sink = k
		mu.Unlock()
		start := time.Since(base0)
		pctx, cancel := context.WithTimeout(gctx, queueTimeout)
		defer cancel()
		if err := produceQueue(pctx, producers, put, base0, start, n, s.Rate); err != nil {
			return nil, err
		}
		select {
		case <-k.done:
		case <-pctx.Done():
			k.mu.Lock()
			defer k.mu.Unlock()
			return nil, fmt.Errorf("%d of %d items consumed: %w (%v)", len(k.lat), k.want, pctx.Err(), k.err)
		}
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.err != nil {
			return nil, k.err
		}
		k.last -= start // the phase's length, from its first put
		return k, nil
	}
	_, err := phase(max(s.Items/10, 1))
	var k *queueSink
	if err == nil {
		k, err = phase(s.Items)
	}
	stop()
	if werr := g.Wait(); err == nil && werr != nil && !errors.Is(werr, context.Canceled) {
		err = werr
	}
	if err != nil {
		return r, err
	}
	r.ItemsPerSec = float64(len(k.lat)) / k.last.Seconds()
	slices.Sort(k.lat)
	r.P50Ms, r.P99Ms = ms(percentile(k.lat, 0.50)), ms(percentile(k.lat, 0.99))
	r.Reads, r.Writes = perInstance(server, c0, cerr, (s.Items+max(s.Items/10, 1))*s.Producers)
	return r, nil
}

// produceQueue has each producer put n items with put, paced to rate items
// per second all together (0: back to back), each carrying the time of
// its put's call since base.
func produceQueue(ctx context.Context, producers []*framework.Client, put func(*framework.Client) func(context.Context, []byte) error,
	base time.Time, start time.Duration, n int, rate float64) error {
	g, gctx := errgroup.WithContext(ctx)
	for p, c := range producers {
		f := put(c)
		g.Go(func() error {
			for i := range n {
				if rate > 0 {
					at := start + time.Duration(float64(i*len(producers)+p)/rate*float64(time.Second))
					if d := at - time.Since(base); d > 0 {
						t := time.NewTimer(d)
						select {
						case <-t.C:
						case <-gctx.Done():
							t.Stop()
							return gctx.Err()
						}
					}
				}
				if err := f(gctx, encodeQueueItem(time.Since(base), p, i)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// consumeQueue is one consumer until ctx ends (nil then).
func consumeQueue(ctx context.Context, c *framework.Client, path, mode string, opts []queue.Option, consumed func([]byte)) error {
	if mode == QueueSimple {
		s := queue.NewSimple(c, path)
		for {
			data, err := s.Take(ctx)
			if ctx.Err() != nil {
				return nil
			}
			if err != nil {
				return err
			}
			consumed(data)
		}
	}
	q := queue.New(c, path, opts...)
	defer func() { _ = q.Close(context.WithoutCancel(ctx)) }()
	err := q.Consume(ctx, func(_ context.Context, it queue.Item) error {
		consumed(it.Data)
		return nil
	})
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// RunCuratorQueue measures Curator 5.4's DistributedQueue (putInBackground
// off, so a put returns once its node exists, as ours) or
// SimpleDistributedQueue the same way, in QueueBench.java.
func RunCuratorQueue(ctx context.Context, servers, server, base, mode string, s QueueSettings) (QueueResult, error) {
	r := QueueResult{Impl: ImplCurator, Mode: mode, Reads: -1, Writes: -1}
	c0, cerr := ReadServerCounters(server)
	j, err := javabench.RunQueue(ctx, javabench.QueueConfig{ConnectString: servers, Path: base, Mode: mode,
		Producers: s.Producers, Consumers: s.Consumers, Items: s.Items, Rate: s.Rate})
	if err != nil {
		return r, err
	}
	r.ItemsPerSec, r.P50Ms, r.P99Ms = j.ItemsPerSec, j.P50Ms, j.P99Ms
	r.Reads, r.Writes = perInstance(server, c0, cerr, (s.Items+max(s.Items/10, 1))*s.Producers)
	return r, nil
}

// MedianQueue merges rounds: for each implementation, mode and round-trip
// time, the round of the median rate (its latencies and requests with it).
func MedianQueue(rows []QueueResult) []QueueResult {
	type key struct {
		impl, mode string
		rtt        float64
	}
	var order []key
	groups := map[key][]QueueResult{}
	for _, r := range rows {
		k := key{r.Impl, r.Mode, r.RTTMs}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	var out []QueueResult
	for _, k := range order {
		var ok []QueueResult
		for _, r := range groups[k] {
			if r.Error == "" {
				ok = append(ok, r)
			}
		}
		if len(ok) == 0 {
			out = append(out, groups[k][0])
			continue
		}
		sorted := slices.Clone(ok)
		slices.SortStableFunc(sorted, func(a, b QueueResult) int { return cmpFloat(a.ItemsPerSec, b.ItemsPerSec) })
		m := sorted[(len(sorted)-1)/2]
		for _, r := range ok {
			if m.OpsPerItem == nil && r.OpsPerItem != nil {
				m.OpsPerItem = r.OpsPerItem
			}
		}
		if len(ok) > 1 {
			for _, r := range ok {
				m.RoundsItems = append(m.RoundsItems, r.ItemsPerSec)
			}
		}
		out = append(out, m)
	}
	return out
}

// WriteQueue prints the queue tables.
func WriteQueue(w io.Writer, rounds int, rep *QueueReport) {
	if rep == nil {
		return
	}
	s := rep.Settings
	pace := "each producer puts its next item when its put returns"
	if s.Rate > 0 {
		pace = fmt.Sprintf("paced to %.0f items/s in all", s.Rate)
	}
	fmt.Fprintf(w, "# queues: %d interleaved rounds, each cell the round of the median rate\n", rounds)
	fmt.Fprintf(w, "# %d producers and %d consumers, a session each; %d items per producer (%s) after a tenth as many unmeasured; items of %d bytes\n",
		s.Producers, s.Consumers, s.Items, pace, queueItemSize)
	fmt.Fprintln(w, "# items/s = items from the first put to the last consumption; p50, p99 = put-to-consume latency (put's call to the consumer receiving the item)")
	fmt.Fprintf(w, "# RTTs/item = one consumer's time per item in measured round trips (%d / items/s / RTT; - when paced); reads, writes = requests the server answered per item (mntr), warm-up and sessions included\n",
		s.Consumers)
	fmt.Fprintf(w, "# modes: %s = DistributedQueue, %s = DistributedQueue with a lock path (lock safety), %s = SimpleDistributedQueue; Curator puts with putInBackground(false)\n",
		QueuePlain, QueueLocked, QueueSimple)
	for _, t := range rep.Tables {
		writeQueueTable(w, s, t)
	}
}

// writeQueueTable prints one round-trip time's queue rows, and their
// requests by type when traced.
func writeQueueTable(w io.Writer, s QueueSettings, t QueueTable) {
	fmt.Fprintln(w)
	rtt := "0 (direct)"
	if t.RTTMs > 0 {
		rtt = time.Duration(t.RTTMs * float64(time.Millisecond)).String()
	}
	fmt.Fprintf(w, "## queues, RTT %s (an exists takes %.3f ms)\n", rtt, t.MeasuredRTTMs)
	if t.LoadAvg != "" {
		fmt.Fprintf(w, "# load average at the start: %s\n", t.LoadAvg)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "mode | impl | items/s | vs Curator | p50 ms | p99 ms | RTTs/item | reads/item | writes/item")
	for _, r := range t.Rows {
		if r.Error != "" {
			fmt.Fprintf(w, "%s | %s | FAILED: %s\n", r.Mode, r.Impl, firstLine(r.Error))
			continue
		}
		vs := "-"
		if r.Impl == ImplOurs {
			for _, c := range t.Rows {
				if c.Impl == ImplCurator && c.Mode == r.Mode && c.Error == "" && c.ItemsPerSec > 0 {
					vs = fmt.Sprintf("%.2fx", r.ItemsPerSec/c.ItemsPerSec)
				}
			}
		}
		rtts := "-" // paced producers leave the consumers waiting: not their time per item
		if v, ok := r.RTTsPerItem(s.Consumers, t.MeasuredRTTMs); ok && s.Rate == 0 {
			rtts = fmt.Sprintf("%.1f", v)
		}
		fmt.Fprintf(w, "%s | %s | %.0f | %s | %.2f | %.2f | %s | %s | %s\n", r.Mode, r.Impl, r.ItemsPerSec, vs, r.P50Ms, r.P99Ms,
			rtts, perInstanceCell(r.Reads), perInstanceCell(r.Writes))
	}
	for _, r := range t.Rows {
		if len(r.OpsPerItem) > 0 {
			fmt.Fprintf(w, "# requests by type per item (server trace, sessions included), %s %s: %s\n", r.Mode, r.Impl, OpsString(r.OpsPerItem))
		}
	}
}
