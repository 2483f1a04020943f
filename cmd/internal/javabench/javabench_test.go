package javabench

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/testkit"
)

// zkAddr is the package's ZooKeeper server, started by TestMain.
var zkAddr string

func TestMain(m *testing.M) { testkit.Main(m, &zkAddr) }

// unique creates a chroot of the test's own on the package's server and
// returns its name.
func unique(t *testing.T) string {
	t.Helper()
	ns := testkit.Unique(t)
	if _, err := testkit.Connect(t, zkAddr, "").Create(testkit.Ctx(t), "/"+ns, nil); err != nil {
		t.Fatalf("create chroot: %v", err)
	}
	return ns
}

func TestCompiledClasses(t *testing.T) {
	dir, err := CompiledClasses()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "javabench", "Bench.class")); err != nil {
		t.Fatal(err)
	}
}

func TestMeasure(t *testing.T) {
	cs := zkAddr + "/" + unique(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, workload := range []string{"mutex", "semv2"} {
		res, err := Measure(ctx, Config{
			ConnectString: cs,
			Workload:      workload,
			Clients:       2,
			MaxLeases:     2,
			Warmup:        time.Second,
			Measure:       time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%+v", res)
		if res.Workload != workload || res.Clients != 2 || res.Ops <= 0 || res.Throughput <= 0 ||
			res.Seconds < 0.9 || res.P50Ms <= 0 || res.P99Ms < res.P50Ms {
			t.Fatalf("implausible result %+v", res)
		}
	}
}

func TestPhases(t *testing.T) {
	ns := unique(t)
	cs := zkAddr + "/" + ns
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const path = "/curatorjava-bench/phases"
	r, err := Start(ctx, Config{ConnectString: cs, Path: path, Workload: "mutex", Clients: 1, Hold: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// The phases are timed from here: wait until the worker is cycling
	// (it has made and deleted a lock node), else a slow start-up
	// leaves the measured phase without a cycle.
	zk := testkit.Connect(t, zkAddr, ns)
	testkit.Eventually(t, "the bench worker cycling", func() bool {
		st, err := zk.Exists(ctx, path)
		return err == nil && st != nil && st.Cversion >= 2
	})
	var points []Point
	for _, phase := range []string{"measure", "count", "stop"} {
		time.Sleep(300 * time.Millisecond) // the length of a phase, not a wait for a condition
		p, err := r.Phase(phase)
		if err != nil {
			t.Fatal(err)
		}
		points = append(points, p)
	}
	res, err := r.Wait()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v %+v", points, res)
	m, c := points[1], points[2]
	// A cycle holds for 1ms, so the measured phase (about 300ms, as
	// long as the sleep above really took) has at most one a
	// millisecond: bounded by the period the JVM measured, not by the
	// sleep's nominal length.
	if m.Cycles <= 0 || float64(m.Cycles) > res.Seconds*1000+1 || c.Cycles <= 0 || res.Ops <= 0 || res.Ops > m.Cycles {
		t.Fatalf("implausible cycles: phases %+v, result %+v", points, res)
	}
	if points[0].CPU <= 0 || m.CPU < points[0].CPU || c.CPU < m.CPU {
		t.Fatalf("JVM CPU time not increasing: %+v", points)
	}
	if res.Seconds < 0.25 || res.Seconds > 5 {
		t.Fatalf("measured period %vs, want about 0.3s", res.Seconds)
	}
}

func TestMeasureRejectsBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{ConnectString: "localhost:1", Workload: "spin", Clients: 1, Measure: time.Second},
		{ConnectString: "localhost:1", Workload: "mutex", Clients: 0, Measure: time.Second},
		{ConnectString: "localhost:1", Workload: "mutex", Clients: 1},
		{Workload: "mutex", Clients: 1, Measure: time.Second},
	} {
		if _, err := Measure(context.Background(), cfg); err == nil {
			t.Errorf("Measure(%+v) succeeded", cfg)
		}
	}
}
