// Package oteltest reads back, in tests, what the instrumented packages
// record: OpenTelemetry's SDK with its in-memory metric reader and span
// recorder. It lives in the telemetrytests module, with the tests that
// import it, so that the library's go.mod requires the OpenTelemetry API
// alone and its users never inherit the SDK.
package oteltest

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// Telemetry is a meter provider and a tracer provider whose data the test
// reads back; both are shut down at the test's cleanup.
type Telemetry struct {
	Reader *sdkmetric.ManualReader
	Meters *sdkmetric.MeterProvider
	Spans  *tracetest.SpanRecorder
	Traces *sdktrace.TracerProvider
}

// New returns providers for a test.
func New(t testing.TB) *Telemetry {
	r := sdkmetric.NewManualReader()
	rec := tracetest.NewSpanRecorder()
	tel := &Telemetry{
		Reader: r,
		Meters: sdkmetric.NewMeterProvider(sdkmetric.WithReader(r)),
		Spans:  rec,
		Traces: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)),
	}
	t.Cleanup(func() {
		_ = tel.Meters.Shutdown(context.Background())
		_ = tel.Traces.Shutdown(context.Background())
	})
	return tel
}

// Point is one series of a metric: its attributes and value (a sum's
// value, a gauge's, or a histogram's count and sum).
type Point struct {
	Attrs attribute.Set
	Value int64   // sums
	Gauge float64 // gauges
	Count uint64  // histograms
	Sum   float64 // histograms
}

// Points collects the metric called name, every series of it; none if it
// was never recorded.
func (tel *Telemetry) Points(t testing.TB, name string) []Point {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tel.Reader.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("collecting metrics: %v", err)
	}
	var out []Point
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out = append(out, Point{Attrs: p.Attributes, Value: p.Value})
				}
			case metricdata.Gauge[float64]:
				for _, p := range d.DataPoints {
					out = append(out, Point{Attrs: p.Attributes, Gauge: p.Value})
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					out = append(out, Point{Attrs: p.Attributes, Gauge: float64(p.Value)})
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					out = append(out, Point{Attrs: p.Attributes, Count: p.Count, Sum: p.Sum})
				}
			default:
				t.Fatalf("metric %s: unexpected data %T", name, m.Data)
			}
		}
	}
	return out
}

// matches reports whether set has every attribute of want.
func matches(set attribute.Set, want []attribute.KeyValue) bool {
	for _, kv := range want {
		v, ok := set.Value(kv.Key)
		if !ok || v != kv.Value {
			return false
		}
	}
	return true
}

// Sum adds up the values of the series of the counter name that carry
// every attribute of want.
func (tel *Telemetry) Sum(t testing.TB, name string, want ...attribute.KeyValue) int64 {
	t.Helper()
	var n int64
	for _, p := range tel.Points(t, name) {
		if matches(p.Attrs, want) {
			n += p.Value
		}
	}
	return n
}

// Count adds up the counts of the series of the histogram name that carry
// every attribute of want.
func (tel *Telemetry) Count(t testing.TB, name string, want ...attribute.KeyValue) uint64 {
	t.Helper()
	var n uint64
	for _, p := range tel.Points(t, name) {
		if matches(p.Attrs, want) {
			n += p.Count
		}
	}
	return n
}

// Has reports whether the metric name has a series that carries every
// attribute of want, whatever its value: a counter made to exist at 0
// has one before its first increment.
func (tel *Telemetry) Has(t testing.TB, name string, want ...attribute.KeyValue) bool {
	t.Helper()
	for _, p := range tel.Points(t, name) {
		if matches(p.Attrs, want) {
			return true
		}
	}
	return false
}

// GaugeValue returns the value of the gauge name's series that carries
// every attribute of want, and whether there is one.
func (tel *Telemetry) GaugeValue(t testing.TB, name string, want ...attribute.KeyValue) (float64, bool) {
	t.Helper()
	for _, p := range tel.Points(t, name) {
		if matches(p.Attrs, want) {
			return p.Gauge, true
		}
	}
	return 0, false
}

// ScopeVersion returns the version of the instrumentation scope called
// name among the collected metrics, and whether it recorded any.
func (tel *Telemetry) ScopeVersion(t testing.TB, name string) (string, bool) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tel.Reader.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("collecting metrics: %v", err)
	}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name == name {
			return sm.Scope.Version, true
		}
	}
	return "", false
}

// Series returns the attribute sets of name's series with a non-zero
// value or count.
func (tel *Telemetry) Series(t testing.TB, name string) []attribute.Set {
	t.Helper()
	var out []attribute.Set
	for _, p := range tel.Points(t, name) {
		if p.Value != 0 || p.Count != 0 {
			out = append(out, p.Attrs)
		}
	}
	return out
}

// CheckLockNames fails t unless the lock duration metrics
// (curator.lock.acquire.duration and curator.lock.hold.duration) were
// recorded and the curator.lock.name of every series of them is want of
// the series' attributes.
func (tel *Telemetry) CheckLockNames(t testing.TB, want func(attribute.Set) string) {
	t.Helper()
	for _, metric := range []string{"curator.lock.acquire.duration", "curator.lock.hold.duration"} {
		series := tel.Series(t, metric)
		if len(series) == 0 {
			t.Errorf("%s: not recorded", metric)
		}
		for _, s := range series {
			if v, _ := s.Value("curator.lock.name"); v.AsString() != want(s) {
				t.Errorf("%s: a series named %q, want %q: %v", metric, v.AsString(), want(s), s.Encoded(attribute.DefaultEncoder()))
			}
		}
	}
}

// Ended returns the ended spans called name.
func (tel *Telemetry) Ended(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range tel.Spans.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}
