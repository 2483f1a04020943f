package cache_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/cache"
)

// A load over several sessions while 4 clients change the tree ends with
// the cache matching the server: the changes made during the load reach
// it by its watch, on the client's session, whatever the other sessions
// read.
func TestLoadOverSessionsConverges(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	ctx := roundsCtx(t)
	c := testkit.Connect(t, zkAddr, ns)
	var writers []*framework.Client
	for range 4 {
		writers = append(writers, testkit.Connect(t, zkAddr, ns))
	}
	mustCreate(t, ctx, c, "/t", "")
	var ops []framework.Op
	for i := range 20 {
		ops = append(ops, framework.CreateOp(fmt.Sprintf("/t/%d", i), []byte("x"), framework.Persistent))
		for j := range 20 {
			ops = append(ops, framework.CreateOp(fmt.Sprintf("/t/%d/%d", i, j), []byte("y"), framework.Persistent))
		}
	}
	if _, err := c.Transaction(ctx, ops...); err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		ch := cache.New(c, "/t", cache.WithLoadSessions(4), cache.WithReadsInFlight(4))
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			churn(ctx, writers, "/t", 60, int64(round))
		}()
		if err := ch.Start(ctx); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		converged(t, ctx, ch, c, "/t", -1)
		_ = ch.Close()
	}
	if err := c.Delete(ctx, "/t", framework.DeletingChildren()); err != nil {
		t.Fatal(err)
	}
}

func TestLoadSessionsBadInput(t *testing.T) {
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	for _, n := range []int{0, -1, 17} {
		if err := cache.New(c, "/t", cache.WithLoadSessions(n)).Start(context.Background()); !errors.Is(err, cache.ErrInvalidOption) {
			t.Errorf("WithLoadSessions(%d): Start = %v, want ErrInvalidOption", n, err)
		}
	}
}
