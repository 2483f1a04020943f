package javabench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/gocurator/curator/internal/curatorjava"
)

// DiscoveryConfig configures one run of DiscoveryBench.java: Curator 5.4's
// curator-x-discovery, one client, one ServiceDiscovery.
type DiscoveryConfig struct {
	// ConnectString is the ZooKeeper connect string.
	ConnectString string
	// BasePath is the ServiceDiscovery's base path.
	BasePath string
	// Instances is how many instances the picked service has.
	Instances int
	// Picks is how many ServiceProvider.getInstance() calls are timed.
	Picks int64
	// Churn is how many instances are registered and unregistered, by
	// Workers threads.
	Churn   int
	Workers int
	// Phase is "pick" or "churn" for that measure alone, "" for both.
	Phase string
	// Stderr receives the JVM's stderr if non-nil; otherwise its tail is
	// included in errors.
	Stderr io.Writer
}

// DiscoveryResult is DiscoveryBench.java's JSON line.
type DiscoveryResult struct {
	// PickNs is the time of one getInstance() of a started provider.
	PickNs float64 `json:"pick_ns"`
	// PickBytes is the heap the picking thread allocated per pick.
	PickBytes float64 `json:"pick_bytes"`
	// ChurnPerSec is instances registered and unregistered per second.
	ChurnPerSec float64 `json:"churn_per_sec"`
}

// RunDiscovery runs DiscoveryBench.java to its end. Cancelling ctx kills
// the JVM. Errors wrap curatorjava.ErrNotInstalled when Java or the Curator
// jars are missing.
func RunDiscovery(ctx context.Context, cfg DiscoveryConfig) (DiscoveryResult, error) {
	var r DiscoveryResult
	phase := cfg.Phase
	if phase == "" {
		phase = "both"
	}
	if phase != "pick" && phase != "churn" && phase != "both" {
		return r, fmt.Errorf("javabench: discovery phase %q: pick, churn or empty", cfg.Phase)
	}
	if cfg.ConnectString == "" || cfg.BasePath == "" || cfg.Instances < 1 || cfg.Picks < 1 || cfg.Churn < 1 || cfg.Workers < 1 {
		return r, errors.New("javabench: DiscoveryConfig needs ConnectString, BasePath and positive counts")
	}
	cmd, err := curatorjava.Command(ctx, sources, "javabench.DiscoveryBench", benchJVMOptions, cfg.ConnectString, cfg.BasePath,
		strconv.Itoa(cfg.Instances), strconv.FormatInt(cfg.Picks, 10), strconv.Itoa(cfg.Churn), strconv.Itoa(cfg.Workers), phase)
	if err != nil {
		return r, err
	}
	err = runJSON(cmd, "discovery", cfg.Stderr, &r)
	return r, err
}
