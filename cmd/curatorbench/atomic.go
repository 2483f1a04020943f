package main

import (
	"context"
	"errors"
	"flag"
	"time"

	"github.com/gocurator/curator/cmd/internal/bench"
)

// atomicFlags are -atomic and its settings.
type atomicFlags struct {
	on bool
	s  bench.AtomicSettings
}

func (a *atomicFlags) define(fs *flag.FlagSet) {
	fs.BoolVar(&a.on, "atomic", false, "run the atomic counter and double barrier rows instead of the workloads: increments/s of contending clients and double-barrier round time, ours and Curator's, at every -rtt, -rounds interleaved rounds")
	fs.IntVar(&a.s.Clients, "atomic-clients", 8, "atomic: clients (sessions) contending on the counter, and double-barrier members")
	fs.IntVar(&a.s.Increments, "atomic-increments", 500, "atomic: increments per client per run")
	fs.IntVar(&a.s.PerClient, "atomic-goroutines", 1, "atomic: goroutines (Java: threads) per client sharing its increments, each with a handle of its own")
	fs.IntVar(&a.s.BarrierRounds, "atomic-rounds", 50, "atomic: timed double-barrier rounds per run")
}

// checkAtomic validates -atomic's flags; the request trace is the lock
// table's, so it is off.
func checkAtomic(f *flags) error {
	if !f.atomic.on {
		return nil
	}
	if f.scale || f.watch || f.cache || f.disc.on {
		return errors.New("-atomic is a run separate from -scale, -watch, -cache and -discovery")
	}
	f.opWindow = 0
	return bench.CheckAtomicSettings(f.atomic.s)
}

// runAtomic runs the counter and double barrier rows at one round-trip
// time and adds the table of medians to rep.
func runAtomic(ctx context.Context, f flags, servers string, rtt, measured time.Duration, curatorOK bool,
	rep *bench.Report, logf func(string, ...any)) error {
	if rep.Atomic == nil {
		rep.Atomic = &bench.AtomicReport{Settings: f.atomic.s}
	}
	t, err := bench.RunAtomicRounds(ctx, servers, f.atomic.s, f.rounds, rtt, measured, curatorOK, logf)
	rep.Atomic.Tables = append(rep.Atomic.Tables, t)
	return err
}
