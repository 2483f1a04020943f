package framework_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/leader"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/recipes/shared"
)

// Recipes of several applications run on one session through views: each
// view's recipe nodes live in its namespace, and a recipe made on a view
// works with the same recipe on another client in that namespace.

const recipeTimeout = 30 * time.Second

func connectForTest(t *testing.T, opts ...framework.Option) *framework.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), recipeTimeout)
	defer cancel()
	c, err := framework.Connect(ctx, os.Getenv("GOCURATOR_ZK"), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
	return c
}

func viewOf(t *testing.T, c *framework.Client, ns string) *framework.Client {
	t.Helper()
	v, err := c.WithNamespace(ns)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestViewRecipesMutex(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), recipeTimeout)
	defer cancel()
	ns := fmt.Sprintf("view-mutex-%d", time.Now().UnixNano())
	c := connectForTest(t)
	other := connectForTest(t, framework.WithNamespace(ns+"-a"))
	a, b := viewOf(t, c, ns+"-a"), viewOf(t, c, ns+"-b")

	// Two applications on one session, one lock path each: both hold.
	ma, mb := mutex.New(a, "/lock"), mutex.New(b, "/lock")
	if err := ma.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if err := mb.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := c.Exists(ctx, "/"+ns+"-a/lock/"+lastSegment(ma.Node()))
	if err != nil || st == nil || st.EphemeralOwner != c.SessionID() {
		t.Fatalf("lock node of the view: stat %+v, err %v, want owned by 0x%x", st, err, c.SessionID())
	}
	// Another client in the first view's namespace is excluded.
	mo := mutex.New(other, "/lock")
	if ok, err := mo.TryAcquire(ctx); err != nil || ok {
		t.Fatalf("TryAcquire against the view's hold = %v, %v; want false", ok, err)
	}
	if err := ma.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := mo.TryAcquire(ctx); err != nil || !ok {
		t.Fatalf("TryAcquire after the view released = %v, %v; want true", ok, err)
	}
	for _, m := range []*mutex.Mutex{mo, mb} {
		if err := m.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func TestViewRecipesLeader(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), recipeTimeout)
	defer cancel()
	ns := fmt.Sprintf("view-leader-%d", time.Now().UnixNano())
	c := connectForTest(t)
	other := connectForTest(t, framework.WithNamespace(ns))
	v := viewOf(t, c, ns)

	term, err := leader.New(v, "/election", leader.WithID("view")).Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p, err := leader.New(other, "/election", leader.WithID("other")).Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != "view" || !p.IsLeader {
		t.Fatalf("leader seen from another client in the namespace: %+v, want the view's", p)
	}
	if err := term.Resign(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestViewRecipesSharedCount(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), recipeTimeout)
	defer cancel()
	ns := fmt.Sprintf("view-count-%d", time.Now().UnixNano())
	c := connectForTest(t)
	other := connectForTest(t, framework.WithNamespace(ns))
	v := viewOf(t, c, ns)

	n := shared.NewCount(v, "/count", 1)
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := shared.NewCount(other, "/count", 1).Set(ctx, 42); err != nil {
		t.Fatal(err)
	}
	for {
		vv, ch := n.Watch()
		if vv.Value == 42 {
			break
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("the view's count stayed at %d", vv.Value)
		}
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if err := v.Delete(ctx, "/count"); err != nil {
		t.Fatal(err)
	}
}

func lastSegment(p string) string {
	_, name := framework.SplitPath(p)
	return name
}
