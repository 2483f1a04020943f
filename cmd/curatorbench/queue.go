package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gocurator/curator/cmd/internal/bench"
)

// queueFlags are -queue and its settings.
type queueFlags struct {
	on    bool
	trace bool
	s     bench.QueueSettings
	modes []string
}

func (q *queueFlags) define(fs *flag.FlagSet) {
	fs.BoolVar(&q.on, "queue", false, "run the queue rows instead of the workloads: items/s and put-to-consume latency of DistributedQueue (without and with a lock path) and SimpleDistributedQueue, ours and Curator's, at every -rtt, -rounds interleaved rounds")
	fs.IntVar(&q.s.Producers, "queue-producers", 4, "queue: producers, a session each")
	fs.IntVar(&q.s.Consumers, "queue-consumers", 4, "queue: consumers, a session each")
	fs.IntVar(&q.s.Items, "queue-items", 500, "queue: items each producer puts per run")
	fs.Float64Var(&q.s.Rate, "queue-rate", 0, "queue: items/s of all producers together (0: each puts its next item when its put returns)")
	fs.BoolVar(&q.trace, "queue-trace", false, "queue: count the embedded server's requests by type over every run (the trace slows the server: for reading where requests go, not for the figures)")
	fs.Func("queue-modes", "queue: comma list of "+strings.Join(bench.QueueModes, ",")+" (default all)", func(v string) error {
		q.modes = nil
		for _, m := range strings.Split(v, ",") {
			m = strings.TrimSpace(m)
			if !slices.Contains(bench.QueueModes, m) {
				return fmt.Errorf("queue mode %q: one of %v", m, bench.QueueModes)
			}
			q.modes = append(q.modes, m)
		}
		return nil
	})
}

// checkQueue validates -queue's flags; the request trace (-op-window) is
// the lock table's, so it is off unless -queue-trace asks for it.
func checkQueue(f *flags) error {
	if !f.queue.on {
		return nil
	}
	if f.scale || f.watch || f.cache || f.disc.on || f.atomic.on {
		return errors.New("-queue is a run separate from -scale, -watch, -cache, -discovery and -atomic")
	}
	if len(f.queue.modes) == 0 {
		f.queue.modes = bench.QueueModes
	}
	if !f.queue.trace {
		f.opWindow = 0
	}
	return bench.CheckQueueSettings(f.queue.s)
}

// runQueue runs the queue rows at one round-trip time and adds the table
// of medians to rep.
func runQueue(ctx context.Context, f flags, srv *server, servers string, rtt, measured time.Duration, curatorOK bool,
	rep *bench.Report, logf func(string, ...any)) error {
	if rep.Queue == nil {
		rep.Queue = &bench.QueueReport{Settings: f.queue.s}
	}
	var trace *bench.OpTrace
	if f.queue.trace {
		if srv.trace == nil {
			return errors.New("-queue-trace: no request trace (an embedded server is needed)")
		}
		trace = srv.trace
	}
	t, err := bench.RunQueueRounds(ctx, servers, srv.first, trace, f.queue.s, f.queue.modes, f.rounds, rtt, measured, curatorOK, logf)
	rep.Queue.Tables = append(rep.Queue.Tables, t)
	return err
}
