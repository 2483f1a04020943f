package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/cmd/internal/javabench"
	"github.com/gocurator/curator/recipes/discovery"
)

// DiscoverySettings are the service discovery rows' settings
// (curatorbench -discovery).
type DiscoverySettings struct {
	// Instances is how many instances the picked service has.
	Instances int `json:"instances"`
	// Picks is how many provider picks a run times.
	Picks int64 `json:"picks"`
	// Churn is how many instances a run registers and unregisters, by
	// Workers goroutines (Java: threads) on one session.
	Churn   int `json:"churn"`
	Workers int `json:"workers"`
}

// DiscoveryResult is one run of the service discovery rows by one
// implementation at one round-trip time.
type DiscoveryResult struct {
	Impl  string  `json:"impl"`
	RTTMs float64 `json:"rtt_ms"`
	// PickNs is one pick of a started provider from its cache: ours
	// Provider.Instance, Curator's ServiceProvider.getInstance.
	PickNs float64 `json:"pick_ns"`
	// PickAllocs is Go heap allocations per pick (this process's
	// runtime.MemStats.Mallocs over the picks); -1 for Curator, whose
	// JVM does not count allocations.
	PickAllocs float64 `json:"pick_allocs"`
	// PickBytes is heap bytes allocated per pick (Go: TotalAlloc; Java:
	// the picking thread's allocated bytes).
	PickBytes float64 `json:"pick_bytes"`
	// ChurnPerSec is instances registered and then unregistered per
	// second.
	ChurnPerSec float64 `json:"churn_per_sec"`
	// ChurnReads and ChurnWrites are the requests the server answered per
	// instance registered and unregistered (mntr's zk_cnt_readlatency and
	// zk_cnt_updatelatency over the churn, its warm-up included, and for
	// Curator the JVM's session too); -1 when mntr could not be read.
	ChurnReads  float64 `json:"churn_reads_per_instance"`
	ChurnWrites float64 `json:"churn_writes_per_instance"`
	Error       string  `json:"error,omitempty"`
	// Rounds holds every round's churn rate and pick time when the row
	// is the median of several rounds.
	RoundsChurn  []float64 `json:"rounds_churn_per_sec,omitempty"`
	RoundsPickNs []float64 `json:"rounds_pick_ns,omitempty"`
}

// DiscoveryTable is the service discovery rows at one round-trip time.
type DiscoveryTable struct {
	RTTMs         float64           `json:"rtt_ms"`
	MeasuredRTTMs float64           `json:"measured_rtt_ms"`
	LoadAvg       string            `json:"load_avg,omitempty"`
	Rows          []DiscoveryResult `json:"rows"`
}

// DiscoveryReport is what -discovery measured: its settings and a table
// per round-trip time.
type DiscoveryReport struct {
	Settings DiscoverySettings `json:"settings"`
	Tables   []DiscoveryTable  `json:"tables"`
}

// RunDiscoveryRounds runs the service discovery rows through servers,
// ours and, when curator is set, Curator's, rounds times interleaved, and
// returns the table of the medians. server is the ZooKeeper server whose
// mntr counts the churn's requests (the one servers leads to). The base
// paths are under /curatorbench.
func RunDiscoveryRounds(ctx context.Context, servers, server string, s DiscoverySettings, rounds int, rtt, measured time.Duration,
	curator bool, logf func(string, ...any)) (DiscoveryTable, error) {
	t := DiscoveryTable{RTTMs: ms(rtt), MeasuredRTTMs: ms(measured), LoadAvg: LoadAvg()}
	var all []DiscoveryResult
	for round := range rounds {
		if rounds > 1 {
			logf("discovery, RTT %v: round %d of %d", rtt, round+1, rounds)
		}
		runs := []func(context.Context, string, string, string, DiscoverySettings) (DiscoveryResult, error){RunOurDiscovery, RunRawDiscovery, RunRawWatchedDiscovery}
		if curator {
			runs = append(runs, RunCuratorDiscovery)
		}
		for _, run := range runs {
			base := fmt.Sprintf("/curatorbench/discovery-%d", time.Now().UnixNano())
			r, err := run(ctx, servers, server, base, s)
			r.RTTMs = ms(rtt)
			if err != nil {
				r.Error = err.Error()
				logf("discovery %s, RTT %v: FAILED: %v", r.Impl, rtt, firstLine(err.Error()))
			} else {
				logf("discovery %s, RTT %v: pick %.1f ns (%.1f allocs, %.0f B), churn %.0f instances/s (%.1f reads, %.1f writes each)",
					r.Impl, rtt, r.PickNs, r.PickAllocs, r.PickBytes, r.ChurnPerSec, r.ChurnReads, r.ChurnWrites)
			}
			all = append(all, r)
			if err := ctx.Err(); err != nil {
				// What was measured before an interrupt is reported.
				t.Rows = MedianDiscovery(all)
				return t, err
			}
		}
	}
	t.Rows = MedianDiscovery(all)
	return t, nil
}

// RunOurDiscovery measures recipes/discovery under base through servers:
// picks of a started Provider (round robin, the default) over s.Instances
// instances, then registration churn, its requests counted by server's
// mntr.
func RunOurDiscovery(ctx context.Context, servers, server, base string, s DiscoverySettings) (DiscoveryResult, error) {
	r := DiscoveryResult{Impl: ImplOurs}
	c, err := Connect(ctx, servers)
	if err != nil {
		return r, err
	}
	defer c.Close()
	d := discovery.New(c, base)
	defer func() { _ = d.Close(context.WithoutCancel(ctx)) }()
	if err := ourPicks(ctx, d, s, &r); err != nil {
		return r, err
	}
	c0, cerr := ReadServerCounters(server)
	// Unmeasured, as Curator's JIT warms up: a tenth as many.
	warm := max(s.Churn/10, s.Workers)
	if _, err := ourChurn(ctx, d, "w", warm, s.Workers); err != nil {
		return r, err
	}
	elapsed, err := ourChurn(ctx, d, "c", s.Churn, s.Workers)
	if err != nil {
		return r, err
	}
	r.ChurnPerSec = float64(s.Churn) / elapsed.Seconds()
	r.ChurnReads, r.ChurnWrites = perInstance(server, c0, cerr, s.Churn+warm)
	return r, nil
}

// RunRawDiscovery is the churn's floor: go-zookeeper alone, each instance
// one create of its node (the same JSON as ours, under the same parent)
// and one delete, by as many goroutines on one session. It watches
// nothing, checks no owner and re-registers nothing: what any client's
// register and unregister cost at least, two round trips. It has no
// picks.
func RunRawDiscovery(ctx context.Context, servers, server, base string, s DiscoverySettings) (DiscoveryResult, error) {
	return runRawDiscovery(ctx, servers, server, base, s, false)
}

// RunRawWatchedDiscovery is RunRawDiscovery with the one request a
// watched registration adds: a getData with a watch, sent beside the
// create from a goroutine of its own (as recipes/node sends it), which
// the delete then fires. It is the churn's floor for a registration that
// is watched, as ours is (re-made if it goes).
func RunRawWatchedDiscovery(ctx context.Context, servers, server, base string, s DiscoverySettings) (DiscoveryResult, error) {
	return runRawDiscovery(ctx, servers, server, base, s, true)
}

func runRawDiscovery(ctx context.Context, servers, server, base string, s DiscoverySettings, watch bool) (DiscoveryResult, error) {
	r := DiscoveryResult{Impl: ImplRaw, PickAllocs: -1}
	if watch {
		r.Impl = ImplRawWatched
	}
	conn, err := DialZK(ctx, servers)
	if err != nil {
		return r, err
	}
	defer conn.Close()
	parent := base + "/churn"
	for _, p := range []string{"/curatorbench", base, parent} {
		if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return r, fmt.Errorf("create %s: %w", p, err)
		}
	}
	c0, cerr := ReadServerCounters(server)
	warm := max(s.Churn/10, s.Workers)
	if _, err := rawChurn(ctx, conn, parent, "w", warm, s.Workers, watch); err != nil {
		return r, err
	}
	elapsed, err := rawChurn(ctx, conn, parent, "c", s.Churn, s.Workers, watch)
	if err != nil {
		return r, err
	}
	r.ChurnPerSec = float64(s.Churn) / elapsed.Seconds()
	r.ChurnReads, r.ChurnWrites = perInstance(server, c0, cerr, s.Churn+warm)
	for _, p := range []string{parent, base} {
		_ = conn.Delete(p, -1)
	}
	return r, nil
}

// rawChurn creates and deletes n ephemeral instance nodes under parent,
// workers at a time, each watched in between if watch is set, and
// returns how long it took.
func rawChurn(ctx context.Context, conn *zk.Conn, parent, prefix string, n, workers int, watch bool) (time.Duration, error) {
	return churn(ctx, n, workers, func(i int) error {
		inst := churnInstance(prefix, i)
		data, err := inst.MarshalJSON()
		path := parent + "/" + inst.ID
		if err == nil {
			_, err = rawCreate(conn, path, data, watch)
		}
		if err == nil {
			err = conn.Delete(path, -1)
		}
		return err
	})
}

// churn runs pair(i) for i from 0 to n, workers at a time, and returns
// how long it took; the first error stops every worker.
func churn(ctx context.Context, n, workers int, pair func(i int) error) (time.Duration, error) {
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	t0 := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				if err := pair(i); err != nil {
					mu.Lock()
					first = cmpOr(first, err)
					mu.Unlock()
					next.Store(int64(n)) // the others stop too
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(t0), cmpOr(first, ctx.Err())
}

// rawCreate creates the ephemeral node path and, if watch is set, reads
// it with a watch from a second goroutine, sent just after the create.
func rawCreate(conn *zk.Conn, path string, data []byte, watch bool) (string, error) {
	if !watch {
		return conn.Create(path, data, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	}
	looked := make(chan error, 1)
	go func() {
		runtime.Gosched() // the create is queued first
		_, _, _, err := conn.GetW(path)
		looked <- err
	}()
	p, err := conn.Create(path, data, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	lerr := <-looked
	if err == nil && errors.Is(lerr, zk.ErrNoNode) {
		// The read went first: look again, as the node recipe does.
		_, _, _, lerr = conn.GetW(path)
	}
	if err == nil {
		err = lerr
	}
	return p, err
}

// perInstance divides what server's counters grew by since c0 by n; -1
// when they cannot be read.
func perInstance(server string, c0 ServerCounters, err error, n int) (reads, writes float64) {
	if err != nil || server == "" {
		return -1, -1
	}
	c1, err := ReadServerCounters(server)
	if err != nil {
		return -1, -1
	}
	d := c1.Sub(c0)
	return float64(d.Reads) / float64(n), float64(d.Writes) / float64(n)
}

func churnInstance(prefix string, i int) discovery.Instance {
	return discovery.Instance{Name: "churn", ID: fmt.Sprint(prefix, i), Address: "10.0.0.1", Port: discovery.Int(8080)}
}

func ourPicks(ctx context.Context, d *discovery.Discovery, s DiscoverySettings, r *DiscoveryResult) error {
	for i := range s.Instances {
		if err := d.Register(ctx, discovery.Instance{Name: "svc", ID: fmt.Sprint("i", i), Address: "10.0.0.1", Port: discovery.Int(8080)}); err != nil {
			return err
		}
	}
	p := d.Provider("svc")
	defer p.Close()
	if err := p.Start(ctx); err != nil {
		return err
	}
	if n := len(p.Instances()); n != s.Instances {
		return fmt.Errorf("the provider offers %d instances, want %d", n, s.Instances)
	}
	var sink int
	for range min(s.Picks, 100_000) {
		inst, err := p.Instance()
		if err != nil {
			return err
		}
		sink += len(inst.ID)
	}
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	t0 := time.Now()
	for range s.Picks {
		inst, err := p.Instance()
		if err != nil {
			return err
		}
		sink += len(inst.ID)
	}
	elapsed := time.Since(t0)
	runtime.ReadMemStats(&m1)
	runtime.KeepAlive(sink)
	n := float64(s.Picks)
	r.PickNs = float64(elapsed.Nanoseconds()) / n
	r.PickAllocs = float64(m1.Mallocs-m0.Mallocs) / n
	r.PickBytes = float64(m1.TotalAlloc-m0.TotalAlloc) / n
	for i := range s.Instances {
		if err := d.Unregister(ctx, discovery.Instance{Name: "svc", ID: fmt.Sprint("i", i)}); err != nil {
			return err
		}
	}
	return nil
}

// ourChurn registers and unregisters n instances, workers at a time, and
// returns how long it took.
func ourChurn(ctx context.Context, d *discovery.Discovery, prefix string, n, workers int) (time.Duration, error) {
	return churn(ctx, n, workers, func(i int) error {
		inst := churnInstance(prefix, i)
		if err := d.Register(ctx, inst); err != nil {
			return err
		}
		return d.Unregister(ctx, inst)
	})
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// RunCuratorDiscovery measures Curator 5.4's curator-x-discovery the same
// way, in DiscoveryBench.java: a JVM for the picks, then one for the
// churn, whose requests server's mntr counts around it.
func RunCuratorDiscovery(ctx context.Context, servers, server, base string, s DiscoverySettings) (DiscoveryResult, error) {
	r := DiscoveryResult{Impl: ImplCurator, PickAllocs: -1}
	cfg := javabench.DiscoveryConfig{ConnectString: servers, BasePath: base,
		Instances: s.Instances, Picks: s.Picks, Churn: s.Churn, Workers: s.Workers, Phase: "pick"}
	j, err := javabench.RunDiscovery(ctx, cfg)
	if err != nil {
		return r, err
	}
	r.PickNs, r.PickBytes = j.PickNs, j.PickBytes
	c0, cerr := ReadServerCounters(server)
	cfg.Phase = "churn"
	if j, err = javabench.RunDiscovery(ctx, cfg); err != nil {
		return r, err
	}
	r.ChurnPerSec = j.ChurnPerSec
	r.ChurnReads, r.ChurnWrites = perInstance(server, c0, cerr, s.Churn+max(s.Churn/10, s.Workers))
	return r, nil
}

// MedianDiscovery merges rounds: for each implementation and round-trip
// time, the median churn rate and the median pick time (each of its own
// round), with the allocations of the median pick's round.
func MedianDiscovery(rows []DiscoveryResult) []DiscoveryResult {
	type key struct {
		impl string
		rtt  float64
	}
	var order []key
	groups := map[key][]DiscoveryResult{}
	for _, r := range rows {
		k := key{r.Impl, r.RTTMs}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	var out []DiscoveryResult
	for _, k := range order {
		var ok []DiscoveryResult
		for _, r := range groups[k] {
			if r.Error == "" {
				ok = append(ok, r)
			}
		}
		if len(ok) == 0 {
			out = append(out, groups[k][0])
			continue
		}
		byPick := slices.Clone(ok)
		slices.SortStableFunc(byPick, func(a, b DiscoveryResult) int { return cmpFloat(a.PickNs, b.PickNs) })
		m := byPick[(len(byPick)-1)/2]
		byChurn := slices.Clone(ok)
		slices.SortStableFunc(byChurn, func(a, b DiscoveryResult) int { return cmpFloat(a.ChurnPerSec, b.ChurnPerSec) })
		mc := byChurn[(len(byChurn)-1)/2]
		m.ChurnPerSec, m.ChurnReads, m.ChurnWrites = mc.ChurnPerSec, mc.ChurnReads, mc.ChurnWrites
		if len(ok) > 1 {
			for _, r := range ok {
				m.RoundsChurn = append(m.RoundsChurn, r.ChurnPerSec)
				m.RoundsPickNs = append(m.RoundsPickNs, r.PickNs)
			}
		}
		out = append(out, m)
	}
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// WriteDiscovery prints the service discovery tables.
func WriteDiscovery(w io.Writer, rounds int, rep *DiscoveryReport) {
	if rep == nil {
		return
	}
	s := rep.Settings
	fmt.Fprintf(w, "# service discovery: %d interleaved rounds, each cell the median of the rounds\n", rounds)
	fmt.Fprintf(w, "# pick = one pick of a started round-robin provider from its cache (%d instances), %d timed picks after a warm-up;\n", s.Instances, s.Picks)
	fmt.Fprintln(w, "#   allocs = Go heap allocations per pick (the JVM does not count them: -), bytes = heap bytes allocated per pick")
	fmt.Fprintf(w, "# churn = instances registered then unregistered per second: %d instances by %d goroutines (Java: threads) on one session, after a tenth as many unmeasured;\n",
		s.Churn, s.Workers)
	fmt.Fprintln(w, "#   reads, writes = requests the server answered per instance (mntr), the warm-up included")
	fmt.Fprintln(w, "# go-zookeeper raw = the churn's floor: a create and a delete per instance, nothing watched or checked;")
	fmt.Fprintln(w, "#   + watch = the same with a watched read beside the create, which the delete fires: the floor of a watched registration")
	for _, t := range rep.Tables {
		fmt.Fprintln(w)
		rtt := "0 (direct)"
		if t.RTTMs > 0 {
			rtt = time.Duration(t.RTTMs * float64(time.Millisecond)).String()
		}
		fmt.Fprintf(w, "## service discovery, RTT %s (an exists takes %.3f ms)\n", rtt, t.MeasuredRTTMs)
		if t.LoadAvg != "" {
			fmt.Fprintf(w, "# load average at the start: %s\n", t.LoadAvg)
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "impl | pick ns | allocs/pick | bytes/pick | churn instances/s | churn vs Curator | reads/instance | writes/instance")
		for _, r := range t.Rows {
			if r.Error != "" {
				fmt.Fprintf(w, "%s | FAILED: %s\n", r.Impl, firstLine(r.Error))
				continue
			}
			allocs := "-"
			if r.PickAllocs >= 0 {
				allocs = fmt.Sprintf("%.2f", r.PickAllocs)
			}
			vs := "-"
			if r.Impl != ImplCurator {
				for _, c := range t.Rows {
					if c.Impl == ImplCurator && c.Error == "" && c.ChurnPerSec > 0 {
						vs = fmt.Sprintf("%.2fx", r.ChurnPerSec/c.ChurnPerSec)
					}
				}
			}
			pick, bytes := fmt.Sprintf("%.1f", r.PickNs), fmt.Sprintf("%.1f", r.PickBytes)
			if r.Impl == ImplRaw || r.Impl == ImplRawWatched { // the churn's floors: no picks
				pick, bytes = "-", "-"
			}
			fmt.Fprintf(w, "%s | %s | %s | %s | %.0f | %s | %s | %s\n", r.Impl, pick, allocs, bytes, r.ChurnPerSec, vs,
				perInstanceCell(r.ChurnReads), perInstanceCell(r.ChurnWrites))
		}
	}
}

// ErrDiscoverySettings is returned by CheckDiscoverySettings.
var ErrDiscoverySettings = errors.New("-discovery-instances, -discovery-picks, -discovery-churn and -discovery-workers must be positive")

// CheckDiscoverySettings refuses counts below one.
func CheckDiscoverySettings(s DiscoverySettings) error {
	if s.Instances < 1 || s.Picks < 1 || s.Churn < 1 || s.Workers < 1 {
		return ErrDiscoverySettings
	}
	return nil
}

func perInstanceCell(v float64) string {
	if v < 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}
