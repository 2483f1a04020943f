package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/gocurator/curator/cmd/internal/bench"
	"github.com/gocurator/curator/zktest"
)

// registryFlags are -registry-scale and its settings.
type registryFlags struct {
	on       bool
	ensemble int
	s        bench.RegistrySettings
}

func (r *registryFlags) define(fs *flag.FlagSet) {
	fs.BoolVar(&r.on, "registry-scale", false, "run the service registry at scale instead of the workloads, on an embedded ensemble of its own: heap per cache and instance, server watches and CPU per event, fan-out latency")
	fs.IntVar(&r.s.Instances, "registry-instances", 10_000, "registry-scale: instances registered")
	fs.IntVar(&r.s.Caches, "registry-caches", 200, "registry-scale: ServiceCaches of the service, a session each")
	fs.IntVar(&r.s.Procs, "registry-procs", 4, "registry-scale: worker processes the caches are spread over")
	fs.IntVar(&r.s.Samples, "registry-samples", 200, "registry-scale: registrations, one at a time, timed to every cache")
	fs.IntVar(&r.s.Registrars, "registry-registrars", 16, "registry-scale: goroutines registering the instances, on one session")
	fs.Float64Var(&r.s.IdleSeconds, "registry-idle", 5, "registry-scale: seconds the idle servers' CPU is measured, to be taken off the phases'")
	fs.IntVar(&r.ensemble, "registry-ensemble", 3, "registry-scale: servers of the embedded ensemble")
}

// checkRegistry validates -registry-scale's flags.
func checkRegistry(f *flags) error {
	if !f.registry.on {
		return nil
	}
	if f.zk != "" {
		return errors.New("-registry-scale starts an ensemble of its own: it reads the servers' CPU time from /proc (no -zk)")
	}
	if f.registry.ensemble < 1 {
		return errors.New("-registry-ensemble must be at least 1")
	}
	return bench.CheckRegistrySettings(f.registry.s)
}

// The registry run's worker processes are this command, re-executed.
func init() {
	served, err := bench.ServeRegistryWorker()
	if !served {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "curatorbench registry worker:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// runRegistry launches the ensemble, runs the registry at scale on it and
// prints the figures (and writes them to -json).
func runRegistry(ctx context.Context, f flags, stdout, stderr io.Writer) error {
	logf := func(format string, args ...any) {
		fmt.Fprintf(stderr, time.Now().Format("15:04:05 ")+format+"\n", args...)
	}
	opts := []zktest.Option{zktest.WithMaxHeapMB(f.serverHeapMB), zktest.WithJVMArgs("-XX:TieredStopAtLevel=4")}
	if f.zkDir != "" {
		opts = append(opts, zktest.WithBaseDir(f.zkDir))
	}
	logf("starting an embedded ensemble of %d (data under %s, heap %d MiB each)", f.registry.ensemble, orTemp(f.zkDir), f.serverHeapMB)
	e, err := zktest.LaunchEnsemble(f.registry.ensemble, opts...)
	if err != nil {
		return fmt.Errorf("embedded ensemble: %w", err)
	}
	defer func() {
		if err := e.Close(); err != nil {
			logf("stopping the ensemble: %v", err)
		}
	}()
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	run := bench.RegistryRun{Servers: e.ConnectString(), Logf: logf, Worker: func() *exec.Cmd { return exec.Command(exe) }}
	for _, s := range e.Servers() {
		run.Members = append(run.Members, bench.RegistryMember{Addr: s.Addr(), Pid: s.Pid()})
	}
	if err := warmServer(ctx, f, run.Servers, logf); err != nil {
		return err
	}
	r, err := bench.RunRegistryScale(ctx, run, f.registry.s)
	fmt.Fprintln(stdout, bench.NewHeader(run.Servers, fmt.Sprintf("embedded ensemble of %d, heap %d MiB each", f.registry.ensemble, f.serverHeapMB)))
	fmt.Fprintf(stdout, "# curatorbench %s\n", strings.Join(f.args, " "))
	bench.WriteRegistry(stdout, r)
	if f.jsonOut != "" {
		b, jerr := json.MarshalIndent(r, "", "  ")
		if jerr == nil {
			jerr = os.WriteFile(f.jsonOut, b, 0o644)
		}
		if jerr != nil {
			return errors.Join(err, fmt.Errorf("-json: %w", jerr))
		}
	}
	return err
}
