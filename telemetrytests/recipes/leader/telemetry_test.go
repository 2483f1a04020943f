package leader_test

import (
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/leader"
	"github.com/gocurator/curator/telemetrytests/internal/oteltest"
)

// WithTelemetryName: the election's metrics carry the given name, not the
// path, in curator.lock.name.
func TestWithTelemetryName(t *testing.T) {
	t.Parallel()
	const path = "/elections/orders-1234"
	for _, tc := range []struct {
		name string
		opts []leader.Option
		want string
	}{
		{name: "default", want: path},
		{name: "WithTelemetryName", opts: []leader.Option{leader.WithTelemetryName("orders")}, want: "orders"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tel := oteltest.New(t)
			ctx := testkit.Ctx(t)
			c := testkit.Connect(t, zkAddr, testkit.Unique(t), framework.WithMeterProvider(tel.Meters))
			term, err := leader.New(c, path, tc.opts...).Campaign(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := term.Resign(ctx); err != nil {
				t.Fatal(err)
			}
			name := attribute.String("curator.lock.name", tc.want)
			acquired := attribute.String("curator.result", "acquired")
			if got := tel.Count(t, "curator.lock.acquire.duration", name, acquired); got != 1 {
				t.Errorf("acquires named %q: %d, want 1", tc.want, got)
			}
			tel.CheckLockNames(t, func(attribute.Set) string { return tc.want })
		})
	}
}
