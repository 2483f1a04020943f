package javabench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/gocurator/curator/internal/curatorjava"
)

// CountersConfig configures one run of CountersBench.java: Curator 5.4's
// DistributedAtomicLong or DistributedDoubleBarrier, one client (one
// session) per contending client or member.
type CountersConfig struct {
	// ConnectString is the ZooKeeper connect string.
	ConnectString string
	// Path is the counter, or the parent of the rounds' barriers.
	Path string
	// Clients is the number of clients (members), each on a thread.
	Clients int
	// N is the increments per client, or the barrier rounds.
	N int
	// Phase is "increment" or "barrier".
	Phase string
	// PerClient is the threads per client that share its increments
	// (increment phase); 0 or 1: one.
	PerClient int
	// Stderr receives the JVM's stderr if non-nil; otherwise its tail is
	// included in errors.
	Stderr io.Writer
}

// CountersResult is CountersBench.java's JSON line.
type CountersResult struct {
	// IncrementsPerSec is the increments that succeeded per second, all
	// clients together.
	IncrementsPerSec float64 `json:"increments_per_sec"`
	// Final is the counter read back after the increments.
	Final int64 `json:"final"`
	// RoundMs is the mean time of a double-barrier round (enter, leave).
	RoundMs float64 `json:"round_ms"`
}

// RunCounters runs CountersBench.java to its end. Cancelling ctx kills the
// JVM. Errors wrap curatorjava.ErrNotInstalled when Java or the Curator
// jars are missing.
func RunCounters(ctx context.Context, cfg CountersConfig) (CountersResult, error) {
	var r CountersResult
	if cfg.Phase != "increment" && cfg.Phase != "barrier" {
		return r, fmt.Errorf("javabench: counters phase %q: increment or barrier", cfg.Phase)
	}
	if cfg.ConnectString == "" || cfg.Path == "" || cfg.Clients < 1 || cfg.N < 1 {
		return r, errors.New("javabench: CountersConfig needs ConnectString, Path and positive counts")
	}
	cmd, err := curatorjava.Command(ctx, sources, "javabench.CountersBench", benchJVMOptions, cfg.ConnectString, cfg.Path,
		strconv.Itoa(cfg.Clients), strconv.Itoa(cfg.N), cfg.Phase, strconv.Itoa(max(cfg.PerClient, 1)))
	if err != nil {
		return r, err
	}
	err = runJSON(cmd, "counters", cfg.Stderr, &r)
	return r, err
}
