package rwlock_test

import (
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/rwlock"
	"github.com/gocurator/curator/telemetrytests/internal/oteltest"
)

// WithTelemetryName: the metrics of both locks carry the given name, not
// the path, in curator.lock.name.
func TestWithTelemetryName(t *testing.T) {
	t.Parallel()
	const path = "/locks/orders-1234"
	for _, tc := range []struct {
		name string
		opts []rwlock.Option
		want string
	}{
		{name: "default", want: path},
		{name: "WithTelemetryName", opts: []rwlock.Option{rwlock.WithTelemetryName("orders")}, want: "orders"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tel := oteltest.New(t)
			ctx := testkit.Ctx(t)
			c := testkit.Connect(t, zkAddr, testkit.Unique(t), framework.WithMeterProvider(tel.Meters))
			rw := rwlock.New(c, path, tc.opts...)
			for _, k := range []*rwlock.Lock{rw.ReadLock(), rw.WriteLock()} {
				if err := k.Acquire(ctx); err != nil {
					t.Fatal(err)
				}
				if err := k.Release(ctx); err != nil {
					t.Fatal(err)
				}
			}
			name := attribute.String("curator.lock.name", tc.want)
			acquired := attribute.String("curator.result", "acquired")
			for _, kind := range []string{"rwlock_read", "rwlock_write"} {
				if got := tel.Count(t, "curator.lock.acquire.duration", name, acquired, attribute.String("curator.lock.kind", kind)); got != 1 {
					t.Errorf("%s acquires named %q: %d, want 1", kind, tc.want, got)
				}
			}
			tel.CheckLockNames(t, func(attribute.Set) string { return tc.want })
		})
	}
}
