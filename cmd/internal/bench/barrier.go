package bench

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/barrier"
)

// ourBarrierRounds has the clients, one member each, go through one
// unmeasured round and then rounds timed ones of a double barrier for
// len(cs) members, round i on base/r<i> (a barrier of its own, as
// CountersBench.java does, so no round sees another's ready node), and
// returns the mean round time in milliseconds.
func ourBarrierRounds(ctx context.Context, cs []*framework.Client, base string, rounds int) (float64, error) {
	if err := barrierRounds(ctx, cs, base, "w", 1); err != nil {
		return 0, err
	}
	t0 := time.Now()
	if err := barrierRounds(ctx, cs, base, "r", rounds); err != nil {
		return 0, err
	}
	return ms(time.Since(t0)) / float64(rounds), nil
}

func barrierRounds(ctx context.Context, cs []*framework.Client, base, prefix string, rounds int) error {
	g, gctx := errgroup.WithContext(ctx)
	for _, c := range cs {
		g.Go(func() error {
			for i := range rounds {
				d := barrier.NewDouble(c, fmt.Sprintf("%s/%s%d", base, prefix, i), len(cs))
				if err := d.Enter(gctx); err != nil {
					return err
				}
				if err := d.Leave(gctx); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return g.Wait()
}
