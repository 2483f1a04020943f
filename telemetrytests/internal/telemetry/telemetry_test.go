package telemetry_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/goleak"

	"github.com/gocurator/curator/internal/telemetry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Spans are wanted from a provider given explicitly, and from the global
// default once the application has set a global provider (which it
// delegates to, even for a client made before); never from a no-op one.
func TestTracing(t *testing.T) {
	before := otel.GetTracerProvider()
	if telemetry.Tracing(before) {
		t.Fatal("the global default, with no provider set, is tracing")
	}
	if telemetry.Tracing(tracenoop.NewTracerProvider()) || telemetry.Tracing(nil) {
		t.Fatal("a no-op or nil provider is tracing")
	}
	sdk := sdktrace.NewTracerProvider()
	defer func() { _ = sdk.Shutdown(context.Background()) }()
	if !telemetry.Tracing(sdk) {
		t.Fatal("an SDK provider given explicitly is not tracing")
	}
	otel.SetTracerProvider(sdk)
	if !telemetry.Tracing(before) {
		t.Fatal("the global default, once a provider is set, is not tracing")
	}
	// The global default's tracers delegate to the provider set.
	_, span := before.Tracer("test").Start(context.Background(), "span")
	defer span.End()
	if !span.IsRecording() {
		t.Fatal("a span of the global default does not record once a provider is set")
	}
}
