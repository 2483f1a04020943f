package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/gocurator/curator/zktest"
)

// The test binary is the registry run's worker when the run starts it so:
// the worker must not run the tests (or TestMain's server).
func init() {
	served, err := ServeRegistryWorker()
	if !served {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "registry worker:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// The registry scale run at a tiny size: its figures must add up, so that
// the full-size run's can be trusted.
func TestScaleRegistryTiny(t *testing.T) {
	srv := zktest.StartServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s := RegistrySettings{Instances: 100, Caches: 8, Procs: 2, Samples: 10, Registrars: 4, IdleSeconds: 1}
	run := RegistryRun{
		Servers: srv.ConnectString(),
		Members: []RegistryMember{{Addr: srv.Addr(), Pid: srv.Pid()}},
		Worker:  func() *exec.Cmd { return exec.Command(os.Args[0], "-test.run=^$") },
		Logf:    t.Logf,
	}
	r, err := RunRegistryScale(ctx, run, s)
	if err != nil {
		t.Fatal(err)
	}
	// One persistent recursive watch per cache, on the one server.
	if len(r.WatchesPerServer) != 1 || r.WatchesPerServer[0] != s.Caches {
		t.Errorf("server watches %v, want [%d] (one per cache)", r.WatchesPerServer, s.Caches)
	}
	// Every registration reached every cache: one event per cache; the
	// bulk's first registration made the service's node, an event per
	// cache too. The registrar's own node may watch its path (recipes/node
	// decides): the unwatched service shows how many events that adds.
	own := r.Unwatched.Counters.Notifications
	if own != 0 && own != int64(s.Instances) {
		t.Errorf("unwatched service: %d watch events sent, want 0 or one per registration (%d)", own, s.Instances)
	}
	own /= int64(s.Instances)
	if got, want := r.Bulk.Counters.Notifications, int64((s.Instances+1)*s.Caches)+own*int64(s.Instances); got != want {
		t.Errorf("bulk: %d watch events sent, want %d", got, want)
	}
	if got, want := r.Sampled.Counters.Notifications, int64(s.Samples*s.Caches)+own*int64(s.Samples); got != want {
		t.Errorf("samples: %d watch events sent, want %d", got, want)
	}
	if r.Bulk.ServerCPUSeconds <= 0 || r.Bulk.ServerCPUPerEventUs() <= 0 || r.Unwatched.ServerCPUSeconds <= 0 {
		t.Errorf("server CPU: bulk %.3f s, %.1f µs per event, unwatched %.3f s: want all positive",
			r.Bulk.ServerCPUSeconds, r.Bulk.ServerCPUPerEventUs(), r.Unwatched.ServerCPUSeconds)
	}
	// A cache may have the instance before Register returns (the event
	// and the create's reply race; Register may do more after the
	// create), never long before.
	l := r.FanOutLastMs
	if !(r.FanOutFirstMs.P50 > -1000 && r.FanOutFirstMs.P50 <= l.P50 && l.P50 <= l.P99 && l.P99 <= l.Max && l.Max < 10_000) {
		t.Errorf("fan-out first %+v, last %+v: want -1 s < first <= p50 <= p99 <= max < 10 s", r.FanOutFirstMs, l)
	}
	if r.CatchUpSeconds < r.RegisterSeconds || r.RegisterSeconds <= 0 {
		t.Errorf("caught up after %.3f s, registered in %.3f s: the caches cannot be ahead", r.CatchUpSeconds, r.RegisterSeconds)
	}
	// An instance's node is a few hundred bytes of JSON; its share of a
	// cache's heap holds the node, the decoded instance and the snapshot,
	// so it is more than the data and less than a page.
	if r.NodeBytes < 100 || r.NodeBytes > 1000 {
		t.Errorf("instance node of %d bytes", r.NodeBytes)
	}
	if want := 4 + s.Instances*(4+36); r.ListingBytes != want {
		t.Errorf("listing of %d bytes, want %d (UUID ids)", r.ListingBytes, want)
	}
	if h := r.HeapPerInstanceBytes(); h < float64(r.NodeBytes) || h > 4096 {
		t.Errorf("heap per instance per cache %.0f bytes, want between the node's %d bytes and 4 KiB", h, r.NodeBytes)
	}
	if h := r.HeapPerCacheBytes(); h <= 0 || h > 1<<20 {
		t.Errorf("heap per cache %.0f bytes, want positive and under 1 MiB", h)
	}
	t.Logf("%+v", r)
}
