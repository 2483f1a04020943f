package curatorjava

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// BenchConfig configures one run of Bench.java.
type BenchConfig struct {
	// ConnectString is the ZooKeeper connect string.
	ConnectString string
	// Path is the lock path; "/curatorjava-bench/<Workload>" if empty.
	Path string
	// Workload is "mutex" (InterProcessMutex), "read" or "write" (the read
	// or write lock of InterProcessReadWriteLock) or "semv2"
	// (InterProcessSemaphoreV2 with MaxLeases leases).
	Workload string
	// Clients is the number of worker threads, each with its own Curator
	// client and ZooKeeper session.
	Clients int
	// MaxLeases is the number of leases of the semv2 semaphore; 1 if zero.
	MaxLeases int
	// Warmup is run but not measured (JIT compilation, node creation).
	Warmup time.Duration
	// Measure is the measured period; it must be positive.
	Measure time.Duration
	// Stderr receives the JVM's stderr if non-nil; otherwise its tail is
	// included in the error of a failed run.
	Stderr io.Writer
}

// BenchResult is the JSON line printed by Bench.java. Latencies are those of
// acquire, from the call until the lock (or lease) is held.
type BenchResult struct {
	Workload   string  `json:"workload"`
	Clients    int     `json:"clients"`
	MaxLeases  int     `json:"max_leases"`
	Ops        int64   `json:"ops"`        // acquire+release cycles completed in the measured period
	Seconds    float64 `json:"seconds"`    // length of the measured period
	Throughput float64 `json:"throughput"` // Ops per second
	P50Ms      float64 `json:"p50_ms"`
	P90Ms      float64 `json:"p90_ms"`
	P99Ms      float64 `json:"p99_ms"`
	MaxMs      float64 `json:"max_ms"`
	MeanMs     float64 `json:"mean_ms"`
}

// benchJVMOptions: full tiered compilation, since throughput is measured.
// ZooKeeper 3.8's ClientCnxn logs a harmless stack trace at WARN for every
// client it closes; the benchmark closes one per worker, so that logger is
// limited to ERROR here.
var benchJVMOptions = []string{
	"-Xms256m",
	"-Xmx512m",
	"-Dorg.slf4j.simpleLogger.log.org.apache.zookeeper.ClientCnxn=error",
}

// RunBench runs Bench.java with cfg and returns its result. Cancelling ctx
// kills the JVM. Errors wrap ErrNotInstalled when Java or the Curator jars
// are missing.
func RunBench(ctx context.Context, cfg BenchConfig) (BenchResult, error) {
	switch cfg.Workload {
	case "mutex", "read", "write", "semv2":
	default:
		return BenchResult{}, fmt.Errorf("curatorjava: unknown workload %q (want mutex, read, write or semv2)", cfg.Workload)
	}
	if cfg.ConnectString == "" {
		return BenchResult{}, errors.New("curatorjava: BenchConfig.ConnectString is empty")
	}
	if cfg.Clients < 1 {
		return BenchResult{}, fmt.Errorf("curatorjava: BenchConfig.Clients = %d, want >= 1", cfg.Clients)
	}
	if cfg.Warmup < 0 || cfg.Measure <= 0 {
		return BenchResult{}, fmt.Errorf("curatorjava: need Warmup >= 0 and Measure > 0, got %v and %v", cfg.Warmup, cfg.Measure)
	}
	if cfg.MaxLeases == 0 {
		cfg.MaxLeases = 1
	}
	if cfg.MaxLeases < 0 {
		return BenchResult{}, fmt.Errorf("curatorjava: BenchConfig.MaxLeases = %d, want >= 1", cfg.MaxLeases)
	}
	if cfg.Path == "" {
		cfg.Path = "/curatorjava-bench/" + cfg.Workload
	}
	java, argv, err := javaCommandArgs("Bench", benchJVMOptions,
		cfg.ConnectString, cfg.Path, cfg.Workload,
		strconv.Itoa(cfg.Clients), strconv.Itoa(cfg.MaxLeases),
		seconds(cfg.Warmup), seconds(cfg.Measure))
	if err != nil {
		return BenchResult{}, err
	}
	cmd := exec.CommandContext(ctx, java, argv...)
	cmd.SysProcAttr = sysProcAttr()
	cmd.WaitDelay = 5 * time.Second
	var stdout bytes.Buffer
	stderr := &tailBuffer{limit: 64 << 10}
	cmd.Stdout = &stdout
	if cfg.Stderr != nil {
		cmd.Stderr = cfg.Stderr
	} else {
		cmd.Stderr = stderr
	}
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return BenchResult{}, fmt.Errorf("curatorjava: bench: %w", ctx.Err())
		}
		return BenchResult{}, fmt.Errorf("curatorjava: bench %s: %v\nstderr:\n%s", cfg.Workload, err, stderr.String())
	}
	out := strings.TrimSpace(stdout.String())
	if i := strings.LastIndexByte(out, '\n'); i >= 0 {
		out = out[i+1:]
	}
	var res BenchResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		return BenchResult{}, fmt.Errorf("curatorjava: bench output %q: %w", out, err)
	}
	return res, nil
}

func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}
