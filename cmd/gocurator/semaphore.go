package main

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/framework"
)

func (a *app) semaphoreCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "semaphore",
		Short: "Inspect semaphores",
	}
	var max int
	var count string
	leases := &cobra.Command{
		Use:   "leases PATH",
		Short: "Show the leases held and waited for at the semaphore PATH",
		Long: `Shows the semaphore at PATH: Curator's InterProcessSemaphoreV2 layout (a
locks/ gate and leases/), or the V1 layout (lease nodes under PATH, as a
mutex's) when --max or --count says how many leases it allows.

The maximum is not written in either layout: give it with --max N, or with
--count PATH, the SharedCount the semaphore reads it from (Curator's
SharedCountReader constructor; recipes/semaphore WithMaxLeasesFrom). Without
it every V2 lease node is shown as held, but the newest one when the gate
holder owns it: only the gate holder makes leases, and it waits with the
gate held while there are too many.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.semaphoreLeases(cmd.Context(), args[0], max, count)
		},
	}
	leases.Flags().IntVar(&max, "max", 0, "the semaphore's maximum number of leases")
	leases.Flags().StringVar(&count, "count", "", "path of the SharedCount that holds the maximum")
	cmd.AddCommand(leases)
	return cmd
}

func (a *app) semaphoreLeases(ctx context.Context, path string, max int, count string) error {
	if err := checkPath(path); err != nil {
		return err
	}
	if count != "" {
		if err := checkPath(count); err != nil {
			return err
		}
		if max != 0 {
			return usageError{fmt.Errorf("give --max or --count, not both")}
		}
	}
	if max < 0 {
		return usageError{fmt.Errorf("--max %d: must be positive", max)}
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	source := ""
	if count != "" {
		if max, err = a.readCount(ctx, c, count); err != nil {
			return err
		}
		source = "shared count " + count
	}
	locks, s, err := a.listing(ctx, c, path, false)
	if err != nil {
		return err
	}
	var sem *inspect.Lock
	for i := range locks {
		if k := locks[i].Kind; k == inspect.KindSemaphoreV2 || k == inspect.KindMutex && max > 0 {
			sem = &locks[i]
			break
		}
	}
	if sem == nil {
		if len(locks) > 0 && locks[0].Kind == inspect.KindMutex {
			return fmt.Errorf("%s: lock- nodes (a mutex or a V1 semaphore): give --max or --count to read it as a semaphore", path)
		}
		if len(locks) > 0 {
			return wrongKind(path, lockPlace(locks[0]), nil, "a semaphore", "")
		}
		return fmt.Errorf("%s: no semaphore here (no leases/ directory and no lock- nodes)", path)
	}
	sem.ApplyMax(max, source)
	if a.json {
		return writeJSON(a.stdout, sem, false)
	}
	writeLocks(a.stdout, []inspect.Lock{*sem})
	warnSessions(a.stderr, s)
	return nil
}

// readCount reads a SharedCount: 4 bytes, big-endian, signed.
func (a *app) readCount(ctx context.Context, c *framework.Client, path string) (int, error) {
	rctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	data, _, err := c.Get(rctx, path)
	if err != nil {
		return 0, a.describe(path, err)
	}
	if len(data) < 4 {
		return 0, fmt.Errorf("%s: not a SharedCount (%d bytes of data, want 4)", path, len(data))
	}
	n := int(int32(binary.BigEndian.Uint32(data)))
	if n < 1 {
		return 0, fmt.Errorf("%s: the SharedCount is %d: the semaphore admits nobody", path, n)
	}
	return n, nil
}
