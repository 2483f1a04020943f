package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gocurator/curator/cmd/internal/bench"
	"github.com/gocurator/curator/zktest"
)

type flags struct {
	zk           string
	zkDir        string
	fsync        bool
	clients      int
	warmup       time.Duration
	duration     time.Duration
	rounds       int
	rtts         []time.Duration
	hold         time.Duration
	many         int
	manyRTTs     []time.Duration // nil: every RTT
	opWindow     time.Duration
	workloads    string
	peers        bool
	maxLeases    int
	jsonOut      string
	plotOut      string
	sweepPlotOut string
	sweep        string
	scale        bool
	scaleClients int
	scaleWaiters string
	watch        bool
	watchTree    int
	watchSamples int
	watchBurst   int
	watchWriters int
	cache        bool
	cacheTrees   []bench.CacheTree
	cacheSess    int
	disc         discoveryFlags
	atomic       atomicFlags
	queue        queueFlags
	registry     registryFlags
	cpuProfile   string
	serverHeapMB int
	zkWarmup     time.Duration
	replay       string
	args         []string
}

func parseFlags(args []string) (flags, error) {
	f := flags{args: args}
	var rtts, manyRTTs, cacheTrees string
	fs := flag.NewFlagSet("curatorbench", flag.ContinueOnError)
	fs.StringVar(&f.zk, "zk", "", "ZooKeeper to use, host:port[,host:port...]; empty starts an embedded throwaway server")
	fs.StringVar(&f.zkDir, "zk-dir", defaultZKDir(), "directory for the embedded server's data (the default tmpfs avoids measuring the disk)")
	fs.BoolVar(&f.fsync, "fsync", false, "embedded server: fsync the transaction log before answering (forceSync=yes; use with a -zk-dir on disk)")
	fs.IntVar(&f.serverHeapMB, "zk-heap", 512, "embedded server's JVM heap in MiB")
	fs.DurationVar(&f.zkWarmup, "zk-warmup", 10*time.Second, "warm the server's JIT up with unmeasured raw and mutex cycles before the first run")
	fs.IntVar(&f.clients, "clients", 8, "sessions of the contended workloads, each with its own goroutine (or Java thread)")
	fs.DurationVar(&f.warmup, "warmup", 3*time.Second, "warm-up period of every run (not measured)")
	fs.DurationVar(&f.duration, "duration", 8*time.Second, "measured period of every run")
	fs.IntVar(&f.rounds, "rounds", 3, "run every row this many times, interleaved, and report the round with the median throughput")
	fs.StringVar(&rtts, "rtt", "0,0.5ms,2ms", "comma list of round-trip times to run the table at; the clients connect through a proxy that delays each direction by half of it (0: directly)")
	fs.DurationVar(&f.hold, "hold", 5*time.Millisecond, "also run the contended mutex with a critical section of this length (0: not)")
	fs.IntVar(&f.many, "many", 64, "also run the contended mutex with this many sessions (0: not), at -many-rtt")
	fs.StringVar(&manyRTTs, "many-rtt", "2ms", "comma list of the round-trip times of the -many row, or all")
	fs.DurationVar(&f.opWindow, "op-window", 2*time.Second, "embedded server: after each measured period of the first round, count the server's requests by type for this long (0: not)")
	fs.StringVar(&f.workloads, "workloads", "headline", "comma list of "+strings.Join(bench.Names, ",")+"; headline ("+strings.Join(bench.Headline, ",")+"), all, or none")
	fs.BoolVar(&f.peers, "peers", true, "also run go-zookeeper's zk.Lock and Apache Curator (Java) for comparison")
	fs.IntVar(&f.maxLeases, "max-leases", 0, "leases of the semaphore workloads (0: as many as sessions, so a lease is always free)")
	fs.StringVar(&f.jsonOut, "json", "", "write every result as JSON to this file")
	fs.StringVar(&f.plotOut, "plot", "", "draw the contended mutex's throughput against the round-trip time to this file (.svg, .png or .pdf)")
	fs.StringVar(&f.sweep, "sweep", "", "comma list of client counts to run the mutex workload at, ours and the peers' (at the first -rtt)")
	fs.StringVar(&f.sweepPlotOut, "sweep-plot", "", "draw the -sweep's mutex throughput against clients to this file (.svg, .png or .pdf)")
	fs.BoolVar(&f.scale, "scale", false, "run the scale scenario instead of the workloads (at the first -rtt)")
	fs.IntVar(&f.scaleClients, "scale-clients", 100, "scale: clients the waiting handles are spread over")
	fs.StringVar(&f.scaleWaiters, "scale-waiters", "10,100,1000,10000", "scale: queue lengths")
	fs.BoolVar(&f.watch, "watch", false, "run the watch-delivery benchmark instead of the workloads: change on the server to subscriber, ours and Curator's, at every -rtt, -rounds interleaved rounds")
	fs.IntVar(&f.watchTree, "watch-tree", 1000, "watch: nodes in the watched subtree besides the written one")
	fs.IntVar(&f.watchSamples, "watch-samples", 1000, "watch: timed writes (latency samples) per run")
	fs.IntVar(&f.watchBurst, "watch-burst", 20000, "watch: writes of the events/s burst per run")
	fs.IntVar(&f.watchWriters, "watch-writers", 64, "watch: goroutines making the burst's writes, on one session")
	fs.BoolVar(&f.cache, "cache", false, "run the cache load rows instead of the workloads: initial load of -cache-trees by our cache and Curator's CuratorCache, at every -rtt, -rounds interleaved rounds")
	fs.StringVar(&cacheTrees, "cache-trees", "10k,100k,200k:flat", "cache: trees to load, comma list of node counts (mixed depth 1-3), :flat for children of one parent")
	fs.IntVar(&f.cacheSess, "cache-sessions", 4, "cache: also load with cache.WithLoadSessions(n), a row of its own (1: no such row)")
	f.disc.define(fs)
	f.atomic.define(fs)
	f.queue.define(fs)
	f.registry.define(fs)
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of this process to this file")
	fs.StringVar(&f.replay, "replay", "", "measure nothing: print the report of an earlier -json file (and draw its -plot)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: curatorbench [flags]\n\nSee go doc ./cmd/curatorbench.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var err error
	if f.watch || f.cache {
		f.opWindow = 0 // the request trace is the lock table's
	}
	if f.cacheTrees, err = bench.ParseCacheTrees(cacheTrees); err != nil {
		return f, fmt.Errorf("-cache-trees: %w", err)
	}
	if err := checkDiscovery(&f); err != nil {
		return f, err
	}
	if err := checkAtomic(&f); err != nil {
		return f, err
	}
	if err := checkQueue(&f); err != nil {
		return f, err
	}
	if err := checkRegistry(&f); err != nil {
		return f, err
	}
	if f.rtts, err = parseRTTs(rtts); err != nil {
		return f, fmt.Errorf("-rtt: %w", err)
	}
	if len(f.rtts) == 0 {
		return f, errors.New("-rtt: at least one round-trip time")
	}
	if strings.TrimSpace(manyRTTs) != "all" {
		if f.manyRTTs, err = parseRTTs(manyRTTs); err != nil {
			return f, fmt.Errorf("-many-rtt: %w", err)
		}
		if f.manyRTTs == nil {
			f.manyRTTs = []time.Duration{}
		}
	}
	for _, ext := range []string{f.plotOut, f.sweepPlotOut} {
		if ext != "" {
			if _, err := bench.ChartFormat(ext); err != nil {
				return f, err
			}
		}
	}
	switch {
	case f.clients < 1:
		return f, errors.New("-clients must be at least 1")
	case f.duration <= 0 || f.warmup < 0:
		return f, errors.New("-duration must be positive and -warmup not negative")
	case f.rounds < 1:
		return f, errors.New("-rounds must be at least 1")
	case f.maxLeases < 0:
		return f, errors.New("-max-leases must not be negative")
	case f.hold < 0 || f.many < 0 || f.opWindow < 0:
		return f, errors.New("-hold, -many and -op-window must not be negative")
	case f.watchTree < 0 || f.watchSamples < 1 || f.watchBurst < 1 || f.watchWriters < 1:
		return f, errors.New("-watch-tree must not be negative, -watch-samples, -watch-burst and -watch-writers must be positive")
	case (f.watch || f.cache) && f.scale:
		return f, errors.New("-watch and -cache are runs separate from -scale")
	case strings.Contains(f.zk, "/"):
		return f, errors.New("-zk takes host:port[,host:port...] without a chroot")
	}
	return f, nil
}

// parseRTTs parses a comma list of durations; a bare 0 is allowed.
func parseRTTs(list string) ([]time.Duration, error) {
	var out []time.Duration
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if s == "0" {
			out = append(out, 0)
			continue
		}
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("%q is not a round-trip time (0, 500us, 0.5ms, 2ms, ...)", s)
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out, nil
}

func defaultZKDir() string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		return "/dev/shm"
	}
	return ""
}

func main() {
	if serveProxyIfAsked() || bench.ServeSessionIfAsked() {
		return
	}
	f, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "curatorbench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch {
	case f.replay != "":
		err = replay(f, os.Stdout)
	case f.registry.on:
		err = runRegistry(ctx, f, os.Stdout, os.Stderr)
	default:
		err = run(ctx, f, os.Stdout, os.Stderr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "curatorbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, f flags, stdout, stderr io.Writer) error {
	logf := func(format string, args ...any) {
		fmt.Fprintf(stderr, time.Now().Format("15:04:05 ")+format+"\n", args...)
	}
	if f.cpuProfile != "" {
		pf, err := os.Create(f.cpuProfile)
		if err != nil {
			return err
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}

	srv, err := startServer(f, logf)
	if err != nil {
		return err
	}
	defer srv.close()

	rep := &bench.Report{
		Header: bench.NewHeader(srv.addr, srv.describe),
		Settings: bench.Settings{Clients: f.clients, Warmup: f.warmup.String(), Duration: f.duration.String(),
			Rounds: f.rounds, MaxLeases: f.maxLeases, Peers: f.peers, Many: f.many,
			Command: strings.TrimSpace("curatorbench " + strings.Join(f.args, " "))},
	}
	for _, d := range f.rtts {
		rep.Settings.RTTs = append(rep.Settings.RTTs, d.String())
	}
	if f.many > 0 {
		if f.manyRTTs == nil {
			rep.Settings.ManyRTTs = []string{"all"}
		}
		for _, d := range f.manyRTTs {
			rep.Settings.ManyRTTs = append(rep.Settings.ManyRTTs, d.String())
		}
	}
	if f.hold > 0 {
		rep.Settings.Hold = f.hold.String()
	}
	if f.watch {
		rep.Settings.Watch = &bench.WatchSettings{Tree: f.watchTree, Samples: f.watchSamples, Burst: f.watchBurst, Writers: f.watchWriters}
	}
	if f.cache {
		for _, t := range f.cacheTrees {
			rep.Settings.CacheTrees = append(rep.Settings.CacheTrees, t.Label())
		}
	}
	if srv.trace != nil {
		rep.Settings.OpWindow = f.opWindow.String()
	}
	logf("%s", rep.Header)
	err = runAll(ctx, f, srv, rep, logf)
	// What was measured before a failure or an interrupt is still printed.
	printReport(stdout, f, rep)
	if f.jsonOut != "" {
		if err := rep.WriteJSON(f.jsonOut); err != nil {
			return fmt.Errorf("-json: %w", err)
		}
	}
	if err != nil {
		return err
	}
	if f.plotOut != "" && len(rep.Tables) > 0 {
		if err := writeRTTChart(f.plotOut, f, rep.Tables); err != nil {
			return fmt.Errorf("-plot: %w", err)
		}
		logf("wrote %s", f.plotOut)
	}
	if f.sweepPlotOut != "" && len(rep.Sweep) > 0 {
		c := bench.Chart{Title: "Mutex throughput vs sessions (one lock path)", XLabel: "sessions",
			YLabel: "acquisitions / s", Series: bench.SeriesByImpl(rep.Sweep, bench.Mutex)}
		if err := writeChart(f.sweepPlotOut, c); err != nil {
			return fmt.Errorf("-sweep-plot: %w", err)
		}
		logf("wrote %s", f.sweepPlotOut)
	}
	return nil
}

// replay prints the report of an earlier -json file, with the settings it
// was measured with, and draws its chart.
func replay(f flags, stdout io.Writer) error {
	b, err := os.ReadFile(f.replay)
	if err != nil {
		return err
	}
	var rep bench.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return fmt.Errorf("-replay %s: %w", f.replay, err)
	}
	s := rep.Settings
	f.clients, f.rounds = s.Clients, s.Rounds
	if f.warmup, err = time.ParseDuration(s.Warmup); err != nil {
		return fmt.Errorf("-replay %s: warmup: %w", f.replay, err)
	}
	if f.duration, err = time.ParseDuration(s.Duration); err != nil {
		return fmt.Errorf("-replay %s: duration: %w", f.replay, err)
	}
	printReport(stdout, f, &rep)
	if f.plotOut != "" && len(rep.Tables) > 0 {
		return writeRTTChart(f.plotOut, f, rep.Tables)
	}
	return nil
}

// server is the ZooKeeper the benchmark measures.
type server struct {
	addr     string // clients' connect string without a proxy
	first    string // the first server's address: mntr, stmk and the proxy's target
	describe string
	trace    *bench.OpTrace // nil: no request trace
	// cacheTrees are the trees -cache loads, built once on the server.
	cacheTrees []cacheTree
	// pid is the embedded server's process id (0: not known).
	pid   func() int
	close func()
}

// startServer returns the server of -zk, or launches an embedded server
// tuned for measuring: data on tmpfs (or -zk-dir), the full JIT (zktest
// limits it to C1 for fast test starts), a larger heap, and the logger
// level the request trace needs.
func startServer(f flags, logf func(string, ...any)) (*server, error) {
	if f.zk != "" {
		first, _, _ := strings.Cut(f.zk, ",")
		return &server{addr: f.zk, first: first, describe: "external " + f.zk, pid: func() int { return 0 }, close: func() {}}, nil
	}
	jvm := []string{"-XX:TieredStopAtLevel=4"}
	if f.opWindow > 0 {
		jvm = append(jvm, bench.TraceJVMArgs...)
	}
	sync := "no"
	if f.fsync {
		// After zktest's own -Dzookeeper.forceSync=no, so it wins.
		jvm = append(jvm, "-Dzookeeper.forceSync=yes")
		sync = "yes"
	}
	opts := []zktest.Option{zktest.WithMaxHeapMB(f.serverHeapMB), zktest.WithJVMArgs(jvm...)}
	if f.zkDir != "" {
		opts = append(opts, zktest.WithBaseDir(f.zkDir))
	}
	logf("starting embedded ZooKeeper (data under %s, forceSync=%s)", orTemp(f.zkDir), sync)
	s, err := zktest.Launch(opts...)
	if err != nil {
		return nil, fmt.Errorf("embedded ZooKeeper: %w", err)
	}
	fsType := "disk"
	if isTmpfs(s.Dir()) {
		fsType = "tmpfs"
	}
	srv := &server{addr: s.ConnectString(), first: s.Addr(), pid: s.Pid,
		describe: fmt.Sprintf("embedded, data dir %s on %s, forceSync=%s, heap %d MiB", s.Dir(), fsType, sync, f.serverHeapMB),
		close: func() {
			if err := s.Close(); err != nil {
				logf("stopping embedded ZooKeeper: %v", err)
			}
		}}
	if f.opWindow > 0 {
		if srv.trace, err = bench.NewOpTrace(s.Addr(), s.LogPath()); err != nil {
			srv.close()
			return nil, err
		}
	}
	return srv, nil
}

func orTemp(dir string) string {
	if dir == "" {
		return os.TempDir()
	}
	return dir
}

// scenarios are the rows of the table at rtt, in table order.
func scenarios(f flags, names []string, rtt time.Duration) []bench.Scenario {
	leases := f.maxLeases
	if leases == 0 {
		leases = f.clients
	}
	var out []bench.Scenario
	for _, name := range names {
		switch name {
		case bench.Mutex:
			out = append(out, bench.Scenario{Name: name, Clients: f.clients})
			if f.hold > 0 {
				out = append(out, bench.Scenario{Name: name, Clients: f.clients, Hold: f.hold})
			}
			if f.many > 0 && f.many != f.clients && (f.manyRTTs == nil || slices.Contains(f.manyRTTs, rtt)) {
				out = append(out, bench.Scenario{Name: name, Clients: f.many})
			}
		case bench.Uncontended:
			out = append(out, bench.Scenario{Name: name, Clients: 1})
		case bench.Cohort, bench.CohortTokens:
			// Local hand-over pays off over a network: not at RTT 0.
			if rtt > 0 {
				out = append(out, bench.Scenario{Name: name, Clients: 4, PerSession: 16})
				out = append(out, bench.Scenario{Name: name, Clients: 4, PerSession: 16, Hold: time.Millisecond})
			}
		case bench.CohortProcs:
			// A process per session, the set-up (no hold).
			if rtt > 0 {
				out = append(out, bench.Scenario{Name: name, Clients: 4, PerSession: 16})
			}
		case bench.Semaphore, bench.SemaphoreV2:
			out = append(out, bench.Scenario{Name: name, Clients: f.clients, MaxLeases: leases})
		case bench.Election:
			// The fail-over of two sessions' election, at the RTTs of a
			// network only: on loopback it measures CPU contention.
			if rtt > 0 {
				out = append(out, bench.Scenario{Name: name, Clients: 2, Hold: bench.ElectionHold})
			}
		default:
			out = append(out, bench.Scenario{Name: name, Clients: f.clients})
		}
	}
	return out
}

// runAll runs the table at every round-trip time, and the extras (-scale,
// -sweep) at the first.
func runAll(ctx context.Context, f flags, srv *server, rep *bench.Report, logf func(string, ...any)) error {
	names, unavailable, err := bench.ParseNames(f.workloads)
	if err != nil {
		return err
	}
	for _, n := range unavailable {
		rep.Skipped = append(rep.Skipped, n+": skipped (its recipe package is not built into this binary yet)")
	}
	curatorOK := false
	if f.peers {
		if err := bench.CuratorReady(); err != nil {
			rep.Skipped = append(rep.Skipped, "Curator: skipped ("+firstLine(err.Error())+")")
		} else {
			curatorOK = true
		}
	} else {
		rep.Skipped = append(rep.Skipped, "Curator: skipped (-peers=false)", "go-zookeeper zk.Lock: skipped (-peers=false)")
	}
	if srv.trace == nil && !f.watch {
		why := "-op-window=0"
		if f.zk != "" {
			why = "external server: its log is not ours to read"
		}
		rep.Skipped = append(rep.Skipped, "requests by type: not counted ("+why+")")
	}
	for _, s := range rep.Skipped {
		logf("%s", s)
	}
	if f.cache {
		trees, err := buildCacheTrees(ctx, f, srv, logf)
		if f.zk != "" {
			// An embedded server goes with its data at exit; deleting a
			// million nodes first took longer than loading them.
			defer deleteCacheTrees(ctx, srv, trees, logf)
		}
		if err != nil {
			return err
		}
		srv.cacheTrees = trees
	}
	if !f.scale && !f.watch && !f.cache && !f.disc.on && !f.atomic.on && !f.queue.on {
		runs := 0
		for _, rtt := range f.rtts {
			plan := bench.Plan{Peers: f.peers, Curator: curatorOK}
			for _, s := range scenarios(f, names, rtt) {
				runs += plan.Runs(s)
			}
		}
		per := f.warmup + f.duration + 2*time.Second
		logf("%d runs x %d rounds, about %v each: about %v in all", runs, f.rounds, per,
			(time.Duration(runs*f.rounds)*per + time.Duration(runs)*f.opWindow).Round(time.Minute))
	}

	if err := warmServer(ctx, f, srv.addr, logf); err != nil {
		return err
	}
	meter := &bench.Meter{Server: srv.first, Trace: srv.trace, TraceWindow: f.opWindow}
	for i, rtt := range f.rtts {
		if err := runRTT(ctx, f, srv, names, rtt, i == 0, curatorOK, meter, rep, logf); err != nil {
			return err
		}
		if f.scale {
			return nil
		}
	}
	return nil
}

// runRTT runs the table at one round-trip time, through a proxy of its own
// when rtt > 0; first also runs the extras.
func runRTT(ctx context.Context, f flags, srv *server, names []string, rtt time.Duration, first, curatorOK bool,
	meter *bench.Meter, rep *bench.Report, logf func(string, ...any)) error {
	servers := srv.addr
	var proxy *proxyProc
	if rtt > 0 {
		var err error
		if proxy, err = startProxy(srv.first, rtt/2); err != nil {
			return err
		}
		servers = proxy.addr
	}
	closeProxy := func() float64 {
		if proxy == nil {
			return 0
		}
		share := proxy.Close()
		proxy = nil
		return share
	}
	defer closeProxy()
	measured, err := bench.MeasureRTT(ctx, servers, 50)
	if err != nil {
		return err
	}
	logf("RTT %v: clients connect to %s; an exists takes %v", rtt, servers, measured.Round(time.Microsecond))
	if f.scale {
		return runScale(ctx, f, servers, rep, logf)
	}
	if f.disc.on {
		return runDiscovery(ctx, f, srv, servers, rtt, measured, curatorOK, rep, logf)
	}
	if f.atomic.on {
		return runAtomic(ctx, f, servers, rtt, measured, curatorOK, rep, logf)
	}
	if f.queue.on {
		return runQueue(ctx, f, srv, servers, rtt, measured, curatorOK, rep, logf)
	}
	if f.watch || f.cache {
		if f.watch {
			if err := runWatch(ctx, f, srv, servers, rtt, measured, curatorOK, rep, logf); err != nil {
				return err
			}
		}
		if f.cache {
			return runCacheLoads(ctx, f, srv, servers, rtt, measured, curatorOK, rep, logf)
		}
		return nil
	}
	plan := bench.Plan{Servers: servers, RTT: rtt, Warmup: f.warmup, Measure: f.duration, Meter: meter,
		Peers: f.peers, Curator: curatorOK, Logf: logf}
	t := bench.Table{RTTMs: ms(rtt), MeasuredRTTMs: ms(measured), LoadAvg: bench.LoadAvg()}
	var all []bench.Result
	// Also on an interrupt: what was measured is reported.
	defer func() {
		t.Rows = bench.Median(all)
		t.Rows.Sort()
		t.ProxyCPU = closeProxy()
		if t.ProxyCPU > 0 {
			logf("RTT %v: the proxy used %.0f%% of a core", rtt, 100*t.ProxyCPU)
		}
		rep.Tables = append(rep.Tables, t)
	}()
	for round := range f.rounds {
		if f.rounds > 1 {
			logf("RTT %v: round %d of %d", rtt, round+1, f.rounds)
		}
		for _, s := range scenarios(f, names, rtt) {
			all = append(all, plan.RunScenario(ctx, s, round == 0)...)
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	if first {
		return runExtras(ctx, f, servers, plan, rep, logf)
	}
	return nil
}

// runExtras runs -sweep through servers.
func runExtras(ctx context.Context, f flags, servers string, plan bench.Plan, rep *bench.Report, logf func(string, ...any)) error {
	sweep, err := sweepCounts(f)
	if err != nil {
		return err
	}
	plan.Meter = nil
	for _, n := range sweep {
		rep.Sweep = append(rep.Sweep, plan.RunScenario(ctx, bench.Scenario{Name: bench.Mutex, Clients: n}, false)...)
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	rep.Sweep.Sort()
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// warmServer runs unmeasured raw and mutex cycles: the server's JIT
// compiles its request path during the first seconds of load, which
// would otherwise be charged to the first workload.
func warmServer(ctx context.Context, f flags, servers string, logf func(string, ...any)) error {
	if f.zkWarmup <= 0 {
		return nil
	}
	raw, _ := bench.Lookup(bench.Raw, bench.ImplRaw)
	mu, _ := bench.Lookup(bench.Mutex, bench.ImplOurs)
	for _, wl := range []bench.Workload{raw, mu} {
		logf("server warm-up: %s, %d clients, %v", wl.Label(), f.clients, f.zkWarmup/2)
		c := bench.Config{Servers: servers, Path: bench.PathFor(bench.Scenario{Name: "warmup-" + wl.Name, Clients: f.clients}, wl.Impl),
			Clients: f.clients, Measure: f.zkWarmup / 2}
		if _, err := bench.Run(ctx, c, wl); err != nil {
			return fmt.Errorf("server warm-up: %w", err)
		}
	}
	return nil
}

// sweepCounts parses -sweep; with -sweep-plot alone it is 1,2,4,... up to
// -clients.
func sweepCounts(f flags) ([]int, error) {
	if f.sweep == "" {
		if f.sweepPlotOut == "" {
			return nil, nil
		}
		var out []int
		for n := 1; n < f.clients; n *= 2 {
			out = append(out, n)
		}
		return append(out, f.clients), nil
	}
	var out []int
	for _, s := range strings.Split(f.sweep, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-sweep: %q is not a client count", s)
		}
		out = append(out, n)
	}
	return out, nil
}

func runScale(ctx context.Context, f flags, servers string, rep *bench.Report, logf func(string, ...any)) error {
	var waiters []int
	for _, s := range strings.Split(f.scaleWaiters, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("-scale-waiters: %q is not a count", s)
		}
		waiters = append(waiters, n)
	}
	sc, err := bench.RunScale(ctx, bench.ScaleConfig{
		Servers: servers, Path: fmt.Sprintf("/curatorbench/scale-%d", time.Now().UnixNano()),
		Clients: f.scaleClients, Waiters: waiters,
	}, logf)
	rep.Scale = &sc
	if err != nil {
		return fmt.Errorf("scale: %w", err)
	}
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
