package telemetry

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestTracing, which needs the SDK's tracer provider, is in the
// telemetrytests module (telemetrytests/internal/telemetry), so that the
// library's go.mod does not require the SDK.

// The scope version is the module's as built: a test binary's main module
// is gocurator, which the go command builds as "(devel)".
func TestVersion(t *testing.T) {
	if got := Version(); got != "(devel)" {
		t.Errorf("Version() = %q, want (devel) in the module's own tests", got)
	}
}
