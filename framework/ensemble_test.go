package framework

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/zktest"
)

// Killing the leader of an ensemble mid-load is invisible to callers: the
// retry policy carries every operation across the disconnect and the
// election. Creates are protected, so one whose reply died with the leader
// is found instead of failing with ErrNodeExists.
func TestLeaderKilledUnderLoad(t *testing.T) {
	ens := zktest.StartEnsemble(t, 3)
	ns := newNamespace(t)
	c := connect(t, ens.ConnectString(), WithNamespace(ns),
		WithSessionTimeout(10*time.Second),
		WithRetryPolicy(retry.NTimes(30, 200*time.Millisecond)))
	// Elections on a loaded two-core machine can take a while.
	ctx, cancelCtx := context.WithTimeout(context.Background(), 3*testTimeout)
	defer cancelCtx()
	states := record(c)
	defer states.cancel()
	if _, err := c.Create(ctx, "/load", nil); err != nil {
		t.Fatal(err)
	}

	// Several goroutines share the client, as users' code does.
	const workers = 3
	var ops atomic.Int64
	stop := make(chan struct{})
	loopErr := make(chan error, workers)
	for w := range workers {
		go func() {
			loopErr <- func() error {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return nil
					default:
					}
					want := fmt.Sprintf("%d/%d", w, i)
					p, err := c.Create(ctx, "/load/n", []byte(want), Protected())
					if err != nil {
						return fmt.Errorf("op %s: create: %w", want, err)
					}
					data, _, err := c.Get(ctx, p)
					if err != nil {
						return fmt.Errorf("op %s: get %s: %w", want, p, err)
					}
					if string(data) != want {
						return fmt.Errorf("op %s: get %s = %q", want, p, data)
					}
					if _, err := c.Set(ctx, p, []byte(want+"!"), -1); err != nil {
						return fmt.Errorf("op %s: set %s: %w", want, p, err)
					}
					ops.Add(1)
				}
			}()
		}()
	}
	stopLoop := func() error {
		close(stop)
		var first error
		for range workers {
			if err := waitEvent(t, loopErr, 2*testTimeout, "load loop to stop"); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	waitOps := func(n int64, what string) {
		t.Helper()
		eventually(t, 2*testTimeout, what, func() (bool, error) {
			select {
			case err := <-loopErr:
				t.Fatalf("load loop ended early: %v", err)
			default:
			}
			return ops.Load() >= n, nil
		})
	}

	waitOps(20, "load running before the kill")
	leader, err := ens.Leader()
	if err != nil {
		t.Fatal(err)
	}
	if err := leader.Kill(); err != nil {
		t.Fatal(err)
	}
	before := ops.Load()
	electCtx, cancel := context.WithTimeout(ctx, testTimeout)
	defer cancel()
	next, err := ens.AwaitLeader(electCtx, leader)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("leader %d killed after %d ops; server %d leads now", leader.ID(), before, next.ID())
	// Followers drop their clients when the leader goes: the client is
	// disconnected wherever it was connected, and comes back.
	states.expect(t, testTimeout, connstate.Suspended)
	for {
		s := waitEvent(t, states.ch, 2*testTimeout, "reconnection after the election")
		if s.IsConnected() {
			break
		}
	}
	waitOps(ops.Load()+20, "load running after the election")
	if err := stopLoop(); err != nil {
		t.Fatalf("an operation failed across the leader's death: %v", err)
	}
	children, _, err := c.Children(ctx, "/load")
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(children)) != ops.Load() {
		t.Fatalf("%d nodes under /load after %d creates: a create was applied twice or lost", len(children), ops.Load())
	}
}
