package javabench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/gocurator/curator/internal/curatorjava"
)

// QueueConfig configures one run of QueueBench.java: Curator 5.4's
// DistributedQueue or SimpleDistributedQueue, one client (one session) per
// producer and per consumer.
type QueueConfig struct {
	// ConnectString is the ZooKeeper connect string.
	ConnectString string
	// Path is the run's base path: the queue is Path/q, its locks Path/locks.
	Path string
	// Mode is "queue" (DistributedQueue), "queue-lock" (with a lock path)
	// or "simple" (SimpleDistributedQueue).
	Mode string
	// Producers and Consumers are clients, a thread each.
	Producers, Consumers int
	// Items is the items each producer puts, after a tenth as many
	// unmeasured.
	Items int
	// Rate paces the producers, items per second in all; 0: back to back.
	Rate float64
	// Stderr receives the JVM's stderr if non-nil; otherwise its tail is
	// included in errors.
	Stderr io.Writer
}

// QueueResult is QueueBench.java's JSON line.
type QueueResult struct {
	// ItemsPerSec is the measured items over the time from the first put
	// to the last consumption.
	ItemsPerSec float64 `json:"items_per_sec"`
	// P50Ms and P99Ms are put-to-consume latencies.
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
}

// RunQueue runs QueueBench.java to its end. Cancelling ctx kills the JVM.
// Errors wrap curatorjava.ErrNotInstalled when Java or the Curator jars are
// missing.
func RunQueue(ctx context.Context, cfg QueueConfig) (QueueResult, error) {
	var r QueueResult
	if cfg.Mode != "queue" && cfg.Mode != "queue-lock" && cfg.Mode != "simple" {
		return r, fmt.Errorf("javabench: queue mode %q: queue, queue-lock or simple", cfg.Mode)
	}
	if cfg.ConnectString == "" || cfg.Path == "" || cfg.Producers < 1 || cfg.Consumers < 1 || cfg.Items < 1 || cfg.Rate < 0 {
		return r, errors.New("javabench: QueueConfig needs ConnectString, Path and positive counts")
	}
	cmd, err := curatorjava.Command(ctx, sources, "javabench.QueueBench", benchJVMOptions, cfg.ConnectString, cfg.Path, cfg.Mode,
		strconv.Itoa(cfg.Producers), strconv.Itoa(cfg.Consumers), strconv.Itoa(cfg.Items),
		strconv.FormatFloat(cfg.Rate, 'f', -1, 64))
	if err != nil {
		return r, err
	}
	err = runJSON(cmd, "queue", cfg.Stderr, &r)
	return r, err
}
