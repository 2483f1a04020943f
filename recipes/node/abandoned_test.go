package node_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/node"
)

// Pitfall 25 (CURATOR-164's symptom, issue 33 item 1): Close called from
// the Recreating listener, while the node is being made again, must leave
// no node behind: no create of ours may land after Close returns. The
// framework's request wrapper returns at its ctx's end while the create
// may still be sent; a Node whose loop abandoned its create and deleted
// "what exists" left a ghost, owned by the live session, about once in a
// hundred. The evidence is held on the server: every path is read through
// the Node's own client after all the Closes (a session's requests are
// answered in order, so that read comes after any create the Nodes sent),
// then listed through another client.
func TestCloseDuringRecreationLeavesNoGhost(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	admin := testkit.Connect(t, zkAddr, ns)
	ctx := testkit.Ctx(t)
	const (
		workers = 10
		each    = 20 // 200 Nodes in all
	)
	var g errgroup.Group
	for w := range workers {
		g.Go(func() error {
			for i := range each {
				p := fmt.Sprintf("/g/w%d/m%02d", w, i)
				if err := closeWhileRecreating(ctx, c, admin, p); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	for w := range workers {
		for i := range each {
			p := fmt.Sprintf("/g/w%d/m%02d", w, i)
			if _, err := c.Exists(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := admin.Sync(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	var ghosts []string
	for w := range workers {
		for _, kid := range testkit.Children(t, admin, fmt.Sprintf("/g/w%d", w)) {
			ghosts = append(ghosts, fmt.Sprintf("/g/w%d/%s", w, kid))
		}
	}
	if len(ghosts) > 0 {
		t.Fatalf("%d of %d Nodes made again after Close returned: %q", len(ghosts), workers*each, ghosts)
	}
}

// closeWhileRecreating starts a Node at p, deletes its node through admin
// and closes the Node from its Recreating listener, as a service that
// shuts down when it hears its registration is being made again.
func closeWhileRecreating(ctx context.Context, c, admin *framework.Client, p string) error {
	n := node.New(c, p, nil)
	closed := make(chan error, 1)
	var once sync.Once
	cancel := n.Listen(func(ev node.Event) {
		if ev.State == node.Recreating {
			once.Do(func() { closed <- n.Close(ctx) })
		}
	})
	defer cancel()
	if err := n.Start(ctx); err != nil {
		return fmt.Errorf("start %s: %w", p, err)
	}
	if err := admin.Delete(ctx, p); err != nil {
		return fmt.Errorf("delete %s: %w", p, err)
	}
	select {
	case err := <-closed:
		if err != nil {
			return fmt.Errorf("close %s: %w", p, err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: no Recreating heard: %w", p, ctx.Err())
	}
}
