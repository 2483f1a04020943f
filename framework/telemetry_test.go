package framework

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/gocurator/curator/connstate"
)

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
	doc, err := os.ReadFile("../docs/observability.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		attr string
		want []string
	}{
		{"curator.operation", reqNames[:]},
		{"curator.state", stateNames[connstate.Connected:]},
	} {
		if got := docValues(string(doc), tt.attr); !slices.Equal(got, tt.want) {
			t.Errorf("docs/observability.md names the %s values %q, want the client's %q", tt.attr, got, tt.want)
		}
	}
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

// BenchmarkTelemetryRequestOverhead measures what do adds to a request
// when nothing is configured (the global providers, no SDK, no span in the
// context): the clock, the span check, the result and the measurement.
func BenchmarkTelemetryRequestOverhead(b *testing.B) {
	t := newClientTelemetry(&options{})
	ctx := context.Background()
	b.ReportAllocs()
	for range b.N {
		start := time.Now()
		if trace.SpanFromContext(ctx).IsRecording() {
			b.Fatal("a recording span in a background context")
		}
		res := resultOf(nil)
		t.requests.Record(ctx, time.Since(start).Seconds(), t.reqOpts[reqGet][res]...)
	}
}
