package semaphore_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/telemetrytests/internal/oteltest"
)

// WithTelemetryName: the metrics of a semaphore (either layout) and of a
// semaphore mutex carry the given name, not the path, in curator.lock.name.
func TestWithTelemetryName(t *testing.T) {
	t.Parallel()
	const path = "/semaphores/encoders-1234"
	// cycle acquires once and releases.
	type cycle func(ctx context.Context, c *framework.Client, opts ...semaphore.Option) error
	lease := func(layout ...semaphore.Option) cycle {
		return func(ctx context.Context, c *framework.Client, opts ...semaphore.Option) error {
			l, err := semaphore.New(c, path, 2, append(layout, opts...)...).Acquire(ctx)
			if err != nil {
				return err
			}
			return l.Release(ctx)
		}
	}
	mutex := func(ctx context.Context, c *framework.Client, opts ...semaphore.Option) error {
		m := semaphore.NewMutex(c, path, opts...)
		if err := m.Acquire(ctx); err != nil {
			return err
		}
		return m.Release(ctx)
	}
	for _, recipe := range []struct {
		name  string
		cycle cycle
	}{
		{"V1", lease()},
		{"V2", lease(semaphore.CuratorV2())},
		{"NewMutex", mutex},
	} {
		for _, tc := range []struct {
			name string
			opts []semaphore.Option
			want string
		}{
			{name: "default", want: path},
			{name: "WithTelemetryName", opts: []semaphore.Option{semaphore.WithTelemetryName("encoders")}, want: "encoders"},
		} {
			t.Run(recipe.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				tel := oteltest.New(t)
				ctx := testkit.Ctx(t)
				c := testkit.Connect(t, zkAddr, testkit.Unique(t), framework.WithMeterProvider(tel.Meters))
				if err := recipe.cycle(ctx, c, tc.opts...); err != nil {
					t.Fatal(err)
				}
				kind := attribute.String("curator.lock.kind", "semaphore")
				name := attribute.String("curator.lock.name", tc.want)
				acquired := attribute.String("curator.result", "acquired")
				if got := tel.Count(t, "curator.lock.acquire.duration", kind, name, acquired); got != 1 {
					t.Errorf("acquires named %q: %d, want 1", tc.want, got)
				}
				// Every series carries the name: the leases' (kind
				// semaphore) and, in the V2 layout, the gate mutex's (kind
				// mutex), named with "/locks" after it.
				tel.CheckLockNames(t, func(s attribute.Set) string {
					if k, _ := s.Value("curator.lock.kind"); k.AsString() == "mutex" {
						return tc.want + "/locks"
					}
					return tc.want
				})
			})
		}
	}
}
