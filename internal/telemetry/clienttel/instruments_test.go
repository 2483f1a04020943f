package clienttel

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/internal/telemetry"
)

// testScope is the instrumentation scope of the tests' instruments
// (framework's is its ScopeName).
const testScope = "github.com/gocurator/curator/internal/telemetry/clienttel/test"

// The client's metrics and spans are read back through OpenTelemetry's SDK
// by the tests in the telemetrytests module (telemetrytests/framework:
// TestTelemetryClient, TestTelemetryZeroAtConnect), so that the library's
// go.mod does not require the SDK. Those go through the operations and
// states the observability guide names; this holds the guide's lists to be
// exactly the client's.

// The observability guide's attribute table names exactly the operations
// and the states the client records, in the client's order: the
// telemetrytests check a zero series of each, and the connection-state
// gauge's every state, from that table.
func TestTelemetryNamesAreDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/observability.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		attr string
		want []string
	}{
		{"curator.operation", opNames[:]},
		{"curator.state", stateNames[connstate.Connected:]},
	} {
		if got := docValues(string(doc), tt.attr); !slices.Equal(got, tt.want) {
			t.Errorf("docs/observability.md names the %s values %q, want the client's %q", tt.attr, got, tt.want)
		}
	}
}

// The client's meter and tracer carry the library's version as their
// instrumentation scope's. Checked here, where the library is the main
// module ("(devel)"): a test binary of another module (telemetrytests)
// carries no version of its dependencies to report.
func TestTelemetryScopeVersion(t *testing.T) {
	scopes := &scopeRecorder{meters: map[string]string{}, tracers: map[string]string{}}
	ct := New(scopeMeters{r: scopes}, scopeTracers{r: scopes}, testScope)
	defer ct.Close()
	want := telemetry.Version()
	if want == "" {
		t.Fatal("the library's version is empty in its own tests")
	}
	for kind, got := range map[string]map[string]string{"meter": scopes.meters, "tracer": scopes.tracers} {
		if v, ok := got[testScope]; !ok || v != want {
			t.Errorf("%s scope %s: version %q (made: %v), want %q", kind, testScope, v, ok, want)
		}
	}
}

// scopeRecorder records the instrumentation scopes, name and version, of
// the meters and tracers asked of scopeMeters and scopeTracers.
type scopeRecorder struct {
	meters, tracers map[string]string
}

type scopeMeters struct {
	metricnoop.MeterProvider
	r *scopeRecorder
}

type scopeTracers struct {
	tracenoop.TracerProvider
	r *scopeRecorder
}

// Meter records name's version and returns a meter that records nothing.
func (p scopeMeters) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	p.r.meters[name] = metric.NewMeterConfig(opts...).InstrumentationVersion()
	return metricnoop.NewMeterProvider().Meter(name, opts...)
}

// Tracer records name's version and returns a tracer that records nothing.
func (p scopeTracers) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	cfg := trace.NewTracerConfig(opts...)
	p.r.tracers[name] = cfg.InstrumentationVersion()
	return tracenoop.NewTracerProvider().Tracer(name, opts...)
}

var backticked = regexp.MustCompile("`([^`]+)`")

// docValues returns the backticked values in the values cell of the row of
// attr in the guide's attribute table.
func docValues(doc, attr string) []string {
	for _, line := range strings.Split(doc, "\n") {
		if cells := strings.Split(line, "|"); len(cells) >= 4 && strings.HasPrefix(line, "| `"+attr+"` |") {
			var vals []string
			for _, m := range backticked.FindAllStringSubmatch(cells[3], -1) {
				vals = append(vals, m[1])
			}
			return vals
		}
	}
	return nil
}

// BenchmarkTelemetryRequestOverhead measures what framework's do adds to a request
// when nothing is configured (the global providers, no SDK, no span in the
// context): the clock, the span check, the result and the measurement.
func BenchmarkTelemetryRequestOverhead(b *testing.B) {
	t := New(nil, nil, testScope)
	ctx := context.Background()
	b.ReportAllocs()
	for range b.N {
		start := time.Now()
		if trace.SpanFromContext(ctx).IsRecording() {
			b.Fatal("a recording span in a background context")
		}
		res := ResultOf(nil)
		t.requests.Record(ctx, time.Since(start).Seconds(), t.reqOpts[OpGet][res]...)
	}
}
