// Package telemetry holds what the instrumented packages (framework and
// recipes/locking) share about OpenTelemetry: whether spans are wanted at
// all, and the histogram buckets. It depends on the OpenTelemetry API only.
package telemetry

import (
	"runtime/debug"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// defaultTracerProvider is OpenTelemetry's global provider as it is before
// an application sets one: it delegates to the one set later, and records
// nothing until then.
var defaultTracerProvider = otel.GetTracerProvider()

// Tracing reports whether spans started with tp can be recorded. It is
// false for a no-op provider, and for the global default while no
// application has set a global provider: starting a span costs
// allocations even when nothing records it, so instrumented code skips
// its spans then and the hot path costs nothing. It is cheap: an atomic
// load and two comparisons.
func Tracing(tp trace.TracerProvider) bool {
	switch tp.(type) {
	case nil, tracenoop.TracerProvider:
		return false
	}
	// defaultTracerProvider is a pointer: the comparisons cannot panic.
	return tp != defaultTracerProvider || otel.GetTracerProvider() != defaultTracerProvider
}

// LatencyBuckets are the bucket boundaries, in seconds, of request and
// acquire durations: from half a millisecond (a request to a near server)
// to five minutes (a long wait in a lock's queue).
var LatencyBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}

// HoldBuckets are the bucket boundaries, in seconds, of hold durations:
// from a millisecond to a day (a leader's term).
var HoldBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600, 14400, 86400}

// Must returns inst, or fallback when the provider gave no instrument
// (OpenTelemetry's providers return a usable instrument along with an
// error, such as a name it finds invalid; a third-party one may not).
func Must[T any](inst T, err error, fallback T) T {
	if err != nil && any(inst) == nil {
		return fallback
	}
	return inst
}

// RecordOpts returns the options that record a measurement with attrs:
// one attribute set, computed once, so that a measurement allocates
// nothing.
func RecordOpts(set metric.MeasurementOption) []metric.RecordOption {
	return []metric.RecordOption{set}
}

// AddOpts is RecordOpts for counters.
func AddOpts(set metric.MeasurementOption) []metric.AddOption {
	return []metric.AddOption{set}
}

// modulePath is the library's module, whose version is the instrumentation
// scope version of its meters and tracers.
const modulePath = "github.com/gocurator/curator"

// Version returns the library's module version as the binary was built
// with it (v1.2.3, or a pseudo-version), for the instrumentation scope:
// "(devel)" when the library is the main module (its own tests, a
// workspace build), "" when the binary carries no build info.
func Version() string { return version }

var version = func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	if bi.Main.Path == modulePath {
		return bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == modulePath {
			if d.Replace != nil && d.Replace.Version != "" {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return ""
}()
