package locking_test

import (
	"sync"
	"testing"

	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/telemetry"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/locking"
)

// The lock loop's metrics and spans are read back through OpenTelemetry's
// SDK by the tests in the telemetrytests module
// (telemetrytests/recipes/locking: TestTelemetry, the round-trip tests),
// so that the library's go.mod does not require the SDK.

// A lock's meters and tracer carry the library's version as their
// instrumentation scope's. Checked here, where the library is the main
// module ("(devel)"): a test binary of another module (telemetrytests)
// carries no version of its dependencies to report.
func TestTelemetryScopeVersion(t *testing.T) {
	scopes := &scopeRecorder{}
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t),
		framework.WithMeterProvider(&scopeMeters{r: scopes}), framework.WithTracerProvider(&scopeTracers{r: scopes}))
	h, err := locking.New(c, "/locks/scope", mutexDriver).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	want := telemetry.Version()
	if want == "" {
		t.Fatal("the library's version is empty in its own tests")
	}
	scopes.mu.Lock()
	defer scopes.mu.Unlock()
	for kind, got := range map[string][]string{"meter": scopes.meters[locking.ScopeName], "tracer": scopes.tracers[locking.ScopeName]} {
		if len(got) == 0 {
			t.Errorf("no %s of scope %s made", kind, locking.ScopeName)
		}
		for _, v := range got {
			if v != want {
				t.Errorf("%s scope %s: version %q, want %q", kind, locking.ScopeName, v, want)
			}
		}
	}
}

// scopeRecorder records the instrumentation scopes, name and versions, of
// the meters and tracers asked of a scopeMeters and a scopeTracers.
type scopeRecorder struct {
	mu              sync.Mutex
	meters, tracers map[string][]string
}

func (r *scopeRecorder) add(m *map[string][]string, name, version string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if *m == nil {
		*m = map[string][]string{}
	}
	(*m)[name] = append((*m)[name], version)
}

type scopeMeters struct {
	metricnoop.MeterProvider
	r *scopeRecorder
}

// Meter records name's version and returns a meter that records nothing.
func (p *scopeMeters) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	p.r.add(&p.r.meters, name, metric.NewMeterConfig(opts...).InstrumentationVersion())
	return metricnoop.NewMeterProvider().Meter(name, opts...)
}

type scopeTracers struct {
	tracenoop.TracerProvider
	r *scopeRecorder
}

// Tracer records name's version and returns a tracer that records nothing.
func (p *scopeTracers) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	cfg := trace.NewTracerConfig(opts...)
	p.r.add(&p.r.tracers, name, cfg.InstrumentationVersion())
	return tracenoop.NewTracerProvider().Tracer(name, opts...)
}
