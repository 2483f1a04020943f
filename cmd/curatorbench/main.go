package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gocurator/curator/internal/bench"
	"github.com/gocurator/curator/zktest"
)

type flags struct {
	zk           string
	zkDir        string
	clients      int
	warmup       time.Duration
	duration     time.Duration
	workloads    string
	peers        bool
	maxLeases    int
	uncontended  bool
	jsonOut      string
	plotOut      string
	sweep        string
	scale        bool
	scaleClients int
	scaleWaiters string
	cpuProfile   string
	serverHeapMB int
	zkWarmup     time.Duration
	diagnose     bool
	rounds       int
}

func parseFlags(args []string) (flags, error) {
	var f flags
	fs := flag.NewFlagSet("curatorbench", flag.ContinueOnError)
	fs.StringVar(&f.zk, "zk", "", "ZooKeeper to use, host:port[,host:port...]; empty starts an embedded throwaway server")
	fs.StringVar(&f.zkDir, "zk-dir", defaultZKDir(), "directory for the embedded server's data (tmpfs avoids measuring the disk)")
	fs.IntVar(&f.serverHeapMB, "zk-heap", 512, "embedded server's JVM heap in MiB")
	fs.DurationVar(&f.zkWarmup, "zk-warmup", 10*time.Second, "warm the server's JIT up with unmeasured raw and mutex cycles before the first run")
	fs.IntVar(&f.clients, "clients", 8, "clients per workload, each with its own session and goroutine")
	fs.DurationVar(&f.warmup, "warmup", 3*time.Second, "warm-up period of every run (not measured)")
	fs.DurationVar(&f.duration, "duration", 10*time.Second, "measured period of every run")
	fs.StringVar(&f.workloads, "workloads", "all", "comma list of "+strings.Join(bench.Names, ",")+"; all, or none")
	fs.BoolVar(&f.peers, "peers", true, "also run go-zookeeper's zk.Lock and Apache Curator (Java) for comparison")
	fs.IntVar(&f.maxLeases, "max-leases", 2, "leases of the semaphore workloads")
	fs.BoolVar(&f.uncontended, "uncontended", true, "also compare 1 client of our mutex with 1 client of raw create+list+delete")
	fs.StringVar(&f.jsonOut, "json", "", "write every result as JSON to this file")
	fs.StringVar(&f.plotOut, "plot", "", "draw mutex throughput vs clients as SVG to this file (runs -sweep, default 1,2,4,...,-clients)")
	fs.StringVar(&f.sweep, "sweep", "", "comma list of client counts to run the mutex workload at, ours and the peers'")
	fs.BoolVar(&f.scale, "scale", false, "run the scale scenario instead of the workloads")
	fs.IntVar(&f.scaleClients, "scale-clients", 50, "scale: clients the waiting handles are spread over")
	fs.StringVar(&f.scaleWaiters, "scale-waiters", "10,100,1000", "scale: queue lengths")
	fs.IntVar(&f.rounds, "rounds", 1, "run every workload this many times, interleaved, and report the round with the median throughput")
	fs.BoolVar(&f.diagnose, "diagnose", false, "also take the uncontended mutex apart step by step (1 client, alternating rounds)")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of this process to this file")
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
	switch {
	case f.clients < 1:
		return f, errors.New("-clients must be at least 1")
	case f.duration <= 0 || f.warmup < 0:
		return f, errors.New("-duration must be positive and -warmup not negative")
	case f.rounds < 1:
		return f, errors.New("-rounds must be at least 1")
	case f.maxLeases < 1:
		return f, errors.New("-max-leases must be at least 1")
	case strings.Contains(f.zk, "/"):
		return f, errors.New("-zk takes host:port[,host:port...] without a chroot")
	}
	return f, nil
}

func defaultZKDir() string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		return "/dev/shm"
	}
	return ""
}

func main() {
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
	if err := run(ctx, f, os.Stdout, os.Stderr); err != nil {
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

	servers, describe, closeServer, err := startServer(f, logf)
	if err != nil {
		return err
	}
	defer closeServer()

	rep := &bench.Report{
		Header: bench.NewHeader(servers, describe),
		Settings: bench.Settings{Clients: f.clients, Warmup: f.warmup.String(), Duration: f.duration.String(),
			MaxLeases: f.maxLeases, Peers: f.peers},
	}
	logf("%s", rep.Header)
	if f.scale {
		err = runScale(ctx, f, servers, rep, logf)
	} else {
		err = runWorkloads(ctx, f, servers, rep, logf)
	}
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
	if f.plotOut != "" && len(rep.Sweep) > 0 {
		if err := writePlot(f.plotOut, rep.Sweep); err != nil {
			return fmt.Errorf("-plot: %w", err)
		}
		logf("wrote %s", f.plotOut)
	}
	return nil
}

// startServer returns the connect string of -zk, or launches an embedded
// server tuned for measuring: data on tmpfs, the full JIT (zktest limits it
// to C1 for fast test starts) and a larger heap.
func startServer(f flags, logf func(string, ...any)) (servers, describe string, closeFn func(), err error) {
	if f.zk != "" {
		return f.zk, "external " + f.zk, func() {}, nil
	}
	opts := []zktest.Option{
		zktest.WithMaxHeapMB(f.serverHeapMB),
		zktest.WithJVMArgs("-XX:TieredStopAtLevel=4"),
	}
	if f.zkDir != "" {
		opts = append(opts, zktest.WithBaseDir(f.zkDir))
	}
	logf("starting embedded ZooKeeper (data under %s)", orTemp(f.zkDir))
	s, err := zktest.Launch(opts...)
	if err != nil {
		return "", "", nil, fmt.Errorf("embedded ZooKeeper: %w", err)
	}
	fsType := "disk"
	if isTmpfs(s.Dir()) {
		fsType = "tmpfs"
	}
	describe = fmt.Sprintf("embedded, data dir %s on %s, forceSync=no, heap %d MiB", s.Dir(), fsType, f.serverHeapMB)
	return s.ConnectString(), describe, func() {
		if err := s.Close(); err != nil {
			logf("stopping embedded ZooKeeper: %v", err)
		}
	}, nil
}

func orTemp(dir string) string {
	if dir == "" {
		return os.TempDir()
	}
	return dir
}

// pathFor is a lock path of its own for every run.
func pathFor(workload, impl string, clients int) string {
	short := map[string]string{
		bench.ImplOurs: "gocurator", bench.ImplRaw: "raw", bench.ImplZKLock: "zklock", bench.ImplCurator: "curator", bench.ImplSketch: "sketch",
	}[impl]
	return fmt.Sprintf("/curatorbench/%s-%s-%dc-%d", workload, short, clients, time.Now().UnixNano())
}

func runWorkloads(ctx context.Context, f flags, servers string, rep *bench.Report, logf func(string, ...any)) error {
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
	for _, s := range rep.Skipped {
		logf("%s", s)
	}

	cfg := func(workload, impl string, clients int) bench.Config {
		return bench.Config{Servers: servers, Path: pathFor(workload, impl, clients), Clients: clients,
			MaxLeases: f.maxLeases, Warmup: f.warmup, Measure: f.duration}
	}
	runGo := func(wl bench.Workload, clients int) bench.Result {
		logf("%s: %d clients, %v warm-up + %v", wl.Label(), clients, f.warmup, f.duration)
		r, err := bench.Run(ctx, cfg(wl.Name, wl.Impl, clients), wl)
		if err != nil {
			logf("%s: FAILED: %v", wl.Label(), err)
		}
		return r
	}
	curatorDone := map[string]bool{}
	runCurator := func(workload string, clients int) (bench.Result, bool) {
		jw, ok := bench.CuratorWorkload(workload)
		if !ok || !curatorOK || curatorDone[fmt.Sprint(jw, clients)] {
			return bench.Result{}, false
		}
		curatorDone[fmt.Sprint(jw, clients)] = true
		logf("%s/%s: %d clients, %v warm-up + %v", bench.CuratorRow(jw), bench.ImplCurator, clients, f.warmup, f.duration)
		r, err := bench.RunCurator(ctx, cfg(jw, bench.ImplCurator, clients), jw)
		if err != nil {
			logf("Curator %s: FAILED: %v", jw, err)
		}
		return r, true
	}

	if err := warmServer(ctx, f, servers, logf); err != nil {
		return err
	}
	var all []bench.Result
	// Also on an interrupt: what was measured is reported.
	interrupted := func(err error) error {
		rep.Results = bench.Median(all)
		rep.Results.Sort()
		return err
	}
	for round := range f.rounds {
		if f.rounds > 1 {
			logf("round %d of %d", round+1, f.rounds)
			clear(curatorDone)
		}
		for _, name := range names {
			for _, wl := range bench.Available(name, f.diagnose) {
				if wl.Peer && !f.peers {
					continue
				}
				all = append(all, runGo(wl, f.clients))
				if err := ctx.Err(); err != nil {
					return interrupted(err)
				}
			}
			if r, ok := runCurator(name, f.clients); ok {
				all = append(all, r)
			}
			if err := ctx.Err(); err != nil {
				return interrupted(err)
			}
		}
	}
	rep.Results = bench.Median(all)

	if f.uncontended {
		logf("uncontended: 1 client, raw and mutex alternating")
		un, err := bench.RunUncontended(ctx, servers, pathFor(bench.Uncontended, bench.ImplOurs, 1), f.warmup, f.duration)
		if err != nil {
			logf("uncontended: FAILED: %v", err)
			rep.Skipped = append(rep.Skipped, "uncontended: failed ("+firstLine(err.Error())+")")
		} else {
			rep.Uncontended = &un
			rep.Results = append(rep.Results, un.Mutex, un.Raw)
		}
	}

	if f.diagnose {
		logf("diagnose: 1 client, %d steps alternating", len(bench.Diagnostics()))
		rs, err := bench.RunAlternating(ctx, servers, pathFor("diagnose", bench.ImplOurs, 1), f.warmup, f.duration, bench.Diagnostics())
		if err != nil {
			logf("diagnose: FAILED: %v", err)
			rep.Skipped = append(rep.Skipped, "diagnose: failed ("+firstLine(err.Error())+")")
		}
		rep.Diagnose = rs
	}

	sweep, err := sweepCounts(f)
	if err != nil {
		return err
	}
	for _, n := range sweep {
		for _, wl := range bench.Available(bench.Mutex, false) {
			if wl.Peer && !f.peers {
				continue
			}
			if r, ok := reuse(rep.Results, bench.Mutex, wl.Impl, n); ok {
				rep.Sweep = append(rep.Sweep, r)
				continue
			}
			rep.Sweep = append(rep.Sweep, runGo(wl, n))
		}
		if r, ok := reuse(rep.Results, bench.Mutex, bench.ImplCurator, n); ok {
			rep.Sweep = append(rep.Sweep, r)
		} else if r, ok := runCurator(bench.Mutex, n); ok {
			rep.Sweep = append(rep.Sweep, r)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	rep.Results.Sort()
	rep.Sweep.Sort()
	rep.Targets = bench.Targets(rep.Results, f.clients, rep.Uncontended)
	return nil
}

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
		c := bench.Config{Servers: servers, Path: pathFor("warmup-"+wl.Name, wl.Impl, f.clients),
			Clients: f.clients, Measure: f.zkWarmup / 2}
		if _, err := bench.Run(ctx, c, wl); err != nil {
			return fmt.Errorf("server warm-up: %w", err)
		}
	}
	return nil
}

func reuse(rows bench.Rows, workload, impl string, clients int) (bench.Result, bool) {
	for _, r := range rows {
		if r.Workload == workload && r.Impl == impl && r.Clients == clients {
			return r, true
		}
	}
	return bench.Result{}, false
}

// sweepCounts parses -sweep; with -plot alone it is 1,2,4,... up to -clients.
func sweepCounts(f flags) ([]int, error) {
	if f.sweep == "" {
		if f.plotOut == "" {
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
	if err := warmServer(ctx, f, servers, logf); err != nil {
		return err
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
