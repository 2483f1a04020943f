package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gocurator/curator/cmd/internal/javabench"
	"github.com/gocurator/curator/internal/curatorjava"
)

// CuratorWorkload returns the Bench.java workload that is Curator's side
// of our workload name: both semaphore modes are compared with
// InterProcessSemaphoreV2, Curator's only semaphore.
func CuratorWorkload(name string) (string, bool) {
	switch name {
	case Mutex, Uncontended, Cohort, CohortProcs:
		return "mutex", true
	case Read:
		return "read", true
	case Write:
		return "write", true
	case Semaphore, SemaphoreV2:
		return "semv2", true
	case Election:
		return "election", true
	}
	return "", false
}

// CuratorRow is the table workload a Curator run is listed under.
func CuratorRow(javaWorkload string) string {
	switch javaWorkload {
	case "semv2":
		return SemaphoreV2
	default:
		return javaWorkload
	}
}

// CuratorReady compiles the Java side if needed and reports why Curator
// cannot run (no java, no javac, no Curator jars), or nil.
func CuratorReady() error {
	if home := os.Getenv("JAVA_HOME"); home == "" {
		if _, err := exec.LookPath("java"); err != nil {
			return fmt.Errorf("no java in PATH: %w", err)
		}
	}
	_, err := javabench.CompiledClasses()
	return err
}

// CuratorVersion names the Curator release in use, from the versioned jar
// name next to curator-recipes.jar (Debian links curator-recipes-5.4.0.jar
// to it), or "".
func CuratorVersion() string {
	for _, dir := range []string{os.Getenv(curatorjava.JarDirEnv), "/usr/share/java"} {
		if dir == "" {
			continue
		}
		plain := filepath.Join(dir, "curator-recipes.jar")
		if _, err := os.Stat(plain); err != nil {
			continue
		}
		versioned, _ := filepath.Glob(filepath.Join(dir, "curator-recipes-[0-9]*.jar"))
		for _, v := range versioned {
			if a, err := filepath.EvalSymlinks(v); err == nil {
				if b, err := filepath.EvalSymlinks(plain); err == nil && a == b {
					return "Curator " + strings.TrimSuffix(strings.TrimPrefix(filepath.Base(v), "curator-recipes-"), ".jar")
				}
			}
		}
		return "Curator (" + plain + ")"
	}
	return ""
}

// RunCurator runs Curator's side of a workload through Bench.java: one JVM,
// one Curator client and thread per worker, JIT warmed by the warm-up. The
// row is listed under cfg's workload name row (CuratorRow(javaWorkload) if
// empty); its CPU column is the JVM's process CPU time.
func RunCurator(ctx context.Context, cfg Config, javaWorkload, row string) (Result, error) {
	if row == "" {
		row = CuratorRow(javaWorkload)
	}
	r := Result{Workload: row, Impl: ImplCurator, Clients: cfg.Clients, PerSession: cfg.PerSession, HoldMs: ms(cfg.Hold)}
	if javaWorkload == "semv2" {
		r.MaxLeases = cfg.MaxLeases
	}
	fail := func(err error) (Result, error) {
		r.Error = err.Error()
		return r, err
	}
	// As for the Go workloads: the path exists before the run, so no
	// side pays for (re)creating an empty, reaped container parent.
	if err := EnsurePath(ctx, cfg.Servers, cfg.Path); err != nil {
		return fail(err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = DeleteTree(dctx, cfg.Servers, cfg.Path)
	}()
	if cfg.Procs {
		lat, w, err := runCuratorProcs(ctx, cfg, javaWorkload)
		if err != nil {
			return fail(err)
		}
		r = summarize(r, lat, w.period)
		applyWindow(&r, w)
		return r, nil
	}
	br, err := javabench.Start(ctx, javabench.Config{
		ConnectString: cfg.Servers,
		Path:          cfg.Path,
		Workload:      javaWorkload,
		Clients:       cfg.Clients,
		PerClient:     cfg.PerSession,
		MaxLeases:     cfg.MaxLeases,
		Hold:          cfg.Hold,
	})
	if err != nil {
		return fail(err)
	}
	defer br.Close()
	w, err := drive(ctx, cfg, jvm{br})
	if err != nil {
		return fail(err)
	}
	res, err := br.Wait()
	if err != nil {
		return fail(err)
	}
	r.Ops, r.Seconds, r.OpsPerSec = res.Ops, res.Seconds, res.Throughput
	r.P50Ms, r.P90Ms, r.P99Ms, r.MaxMs, r.MeanMs = res.P50Ms, res.P90Ms, res.P99Ms, res.MaxMs, res.MeanMs
	applyWindow(&r, w)
	return r, nil
}

// jvm drives Bench.java's phases.
type jvm struct{ br *javabench.Run }

var javaPhases = map[int32]string{phaseMeasure: "measure", phaseCount: "count", phaseStop: "stop"}

func (j jvm) switchTo(phase int32) (point, error) {
	at := time.Now()
	bp, err := j.br.Phase(javaPhases[phase])
	return point{at: at, cycles: bp.Cycles, cpu: bp.CPU}, err
}

// failed cannot tell early: a failure shows at the next switch.
func (jvm) failed() <-chan struct{} { return nil }

// runCuratorProcs runs Curator's side with a JVM per session (each one
// Curator client and cfg.PerSession threads) and merges their latencies.
func runCuratorProcs(ctx context.Context, cfg Config, javaWorkload string) ([]time.Duration, window, error) {
	runs := make([]*javabench.Run, cfg.Clients)
	defer func() {
		for _, br := range runs {
			if br != nil {
				br.Close()
			}
		}
	}()
	// The JVMs start side by side: one after the other, the first would
	// loop alone for seconds. Not errgroup.WithContext: its context,
	// which would kill the JVMs, ends with Wait.
	var g errgroup.Group
	for i := range runs {
		g.Go(func() error {
			br, err := javabench.Start(ctx, javabench.Config{
				ConnectString: cfg.Servers, Path: cfg.Path, Workload: javaWorkload,
				Clients: 1, PerClient: cfg.PerSession, MaxLeases: cfg.MaxLeases, Hold: cfg.Hold,
				Latencies: true,
			})
			runs[i] = br
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, window{}, err
	}
	w, err := drive(ctx, cfg, jvms(runs))
	if err != nil {
		return nil, window{}, err
	}
	var lat []time.Duration
	for _, br := range runs {
		res, err := br.Wait()
		if err != nil {
			return nil, window{}, err
		}
		lat = append(lat, res.Latencies...)
	}
	return lat, w, nil
}

// jvms drives several Bench.java processes as one loop.
type jvms []*javabench.Run

func (js jvms) switchTo(phase int32) (point, error) {
	p := point{at: time.Now()}
	for _, br := range js {
		bp, err := br.Phase(javaPhases[phase])
		if err != nil {
			return p, err
		}
		if bp.CPU < 0 || p.cpu < 0 {
			p.cpu = -1
		} else {
			p.cpu += bp.CPU
		}
		p.cycles += bp.Cycles
	}
	return p, nil
}

// failed cannot tell early: a failure shows at the next switch.
func (jvms) failed() <-chan struct{} { return nil }
