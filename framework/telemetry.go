package framework

import (
	"errors"

	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/gocurator/curator/internal/telemetry"
	"github.com/gocurator/curator/internal/telemetry/clienttel"
)

// ScopeName is the OpenTelemetry instrumentation scope of the client's
// metrics and spans.
const ScopeName = "github.com/gocurator/curator/framework"

// WithMeterProvider sets where the client's metrics go (see
// docs/observability.md for the list), and the metrics of the recipes run
// on it. The default is OpenTelemetry's global provider, as it is at
// Connect: it records nothing until the application sets one
// (otel.SetMeterProvider), and forwards to it from then on.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(o *options) error {
		if mp == nil {
			return invalid("nil meter provider")
		}
		o.meterProvider = mp
		return nil
	}
}

// WithTracerProvider sets where the client's spans go, and the spans of the
// recipes run on it. The default is OpenTelemetry's global provider: spans
// are made once the application sets one (otel.SetTracerProvider), and
// until then none is started, which costs nothing. The client's operations
// make spans only as children of a span that records (a lock's acquire, or
// one of the application's), so a process does not trace each request.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) error {
		if tp == nil {
			return invalid("nil tracer provider")
		}
		o.tracerProvider = tp
		return nil
	}
}

// MeterProvider returns the provider the client's metrics go to
// (WithMeterProvider's, or the global one), for recipes' own instruments.
func (c *Client) MeterProvider() metric.MeterProvider {
	if c == nil {
		return metricnoop.NewMeterProvider()
	}
	return c.tel.MeterProvider()
}

// TracerProvider returns the provider the client's spans go to
// (WithTracerProvider's, or the global one), for recipes' own spans.
func (c *Client) TracerProvider() trace.TracerProvider {
	if c == nil {
		return tracenoop.NewTracerProvider()
	}
	return c.tel.TracerProvider()
}

// Tracing reports whether spans started on the client's TracerProvider can
// be recorded: false for a no-op provider, and for the global default while
// the application has set no provider. Recipes skip their spans then.
func (c *Client) Tracing() bool {
	if c == nil {
		return false
	}
	return telemetry.Tracing(c.tel.TracerProvider())
}

// resultOf maps a request's error to its result attribute; ErrClosed is
// the client's own, which clienttel cannot know.
func resultOf(err error) clienttel.Result {
	if errors.Is(err, ErrClosed) {
		return clienttel.ResClosed
	}
	return clienttel.ResultOf(err)
}

// newClientTelemetry makes the client's instruments on o's providers.
func newClientTelemetry(o *options) *clienttel.Instruments {
	return clienttel.New(o.meterProvider, o.tracerProvider, ScopeName)
}
