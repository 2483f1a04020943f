package main

import (
	"context"
	"errors"
	"flag"
	"time"

	"github.com/gocurator/curator/cmd/internal/bench"
)

// discoveryFlags are -discovery and its settings.
type discoveryFlags struct {
	on bool
	s  bench.DiscoverySettings
}

func (d *discoveryFlags) define(fs *flag.FlagSet) {
	fs.BoolVar(&d.on, "discovery", false, "run the service discovery rows instead of the workloads: provider pick (ns, allocations) and registration churn (instances/s), ours and Curator's, at every -rtt, -rounds interleaved rounds")
	fs.IntVar(&d.s.Instances, "discovery-instances", 8, "discovery: instances of the service the provider picks from")
	fs.Int64Var(&d.s.Picks, "discovery-picks", 1_000_000, "discovery: timed picks per run")
	fs.IntVar(&d.s.Churn, "discovery-churn", 2000, "discovery: instances registered and unregistered per run")
	fs.IntVar(&d.s.Workers, "discovery-workers", 8, "discovery: goroutines (Java: threads) registering, on one session")
}

// checkDiscovery validates -discovery's flags; the request trace is the
// lock table's, so it is off.
func checkDiscovery(f *flags) error {
	if !f.disc.on {
		return nil
	}
	if f.scale || f.watch || f.cache {
		return errors.New("-discovery is a run separate from -scale, -watch and -cache")
	}
	f.opWindow = 0
	return bench.CheckDiscoverySettings(f.disc.s)
}

// runDiscovery runs the service discovery rows at one round-trip time and
// adds the table of medians to rep.
func runDiscovery(ctx context.Context, f flags, srv *server, servers string, rtt, measured time.Duration, curatorOK bool,
	rep *bench.Report, logf func(string, ...any)) error {
	if rep.Discovery == nil {
		rep.Discovery = &bench.DiscoveryReport{Settings: f.disc.s}
	}
	t, err := bench.RunDiscoveryRounds(ctx, servers, srv.first, f.disc.s, f.rounds, rtt, measured, curatorOK, logf)
	rep.Discovery.Tables = append(rep.Discovery.Tables, t)
	return err
}
