package conformance_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
)

// fencer is the fencing surface every hold type has: the token, the
// multi-op check and the fenced multi, with one signature each.
type fencer interface {
	FencingToken() int64
	CheckOp() (framework.Op, error)
	FencedMulti(ctx context.Context, ops ...framework.Op) ([]zk.MultiResponse, error)
}

// Every hold has the same fencing surface, and it behaves the same: while
// held, a fenced write is applied and the token is the node's czxid; once
// released, CheckOp and FencedMulti fail at once with a typed error, and a
// check taken while held is refused by the server.
func TestEveryHoldHasTheSameFencingSurface(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			ns := testkit.Unique(t)
			c := testkit.Connect(t, zkAddr, ns)
			ctx := testkit.Ctx(t)
			h, node, err := k.take(ctx, c, "/lock")
			if err != nil {
				t.Fatal(err)
			}
			f, ok := h.(fencer)
			if !ok {
				t.Fatalf("%T has no FencingToken/CheckOp/FencedMulti with the common signatures", h)
			}
			st, err := c.Exists(ctx, node)
			if err != nil || st == nil {
				t.Fatalf("held node %s: %v, %v", node, st, err)
			}
			if f.FencingToken() != st.Czxid {
				t.Fatalf("token %d, the node's czxid %d", f.FencingToken(), st.Czxid)
			}
			check, err := f.CheckOp()
			if err != nil {
				t.Fatalf("CheckOp while held: %v", err)
			}
			if _, err := f.FencedMulti(ctx, framework.CreateOp("/fenced", nil, framework.Persistent)); err != nil {
				t.Fatalf("fenced write while held: %v", err)
			}
			if err := h.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := f.CheckOp(); err == nil {
				t.Fatal("CheckOp after Release: no error")
			}
			if _, err := f.FencedMulti(ctx, framework.CreateOp("/late", nil, framework.Persistent)); err == nil {
				t.Fatal("fenced write after Release: no error")
			}
			if _, err := c.Multi(ctx, check, framework.CreateOp("/late", nil, framework.Persistent)); !errors.Is(err, zk.ErrNoNode) {
				t.Fatalf("a check taken while held, used after Release: %v, want zk.ErrNoNode", err)
			}
		})
	}
}

// An error names the lock's path once, at the recipe's layer: "mutex
// /lock: acquire: context deadline exceeded", not the path again from the
// loop underneath.
func TestErrorsNameThePathOnce(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			ns := testkit.Unique(t)
			holder := testkit.Connect(t, zkAddr, ns)
			c := testkit.Connect(t, zkAddr, ns)
			ctx := testkit.Ctx(t)
			if _, _, err := k.take(ctx, holder, "/lock"); err != nil {
				t.Fatal(err)
			}
			actx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			defer cancel()
			_, _, err := k.take(actx, c, "/lock")
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("acquire = %v, want DeadlineExceeded", err)
			}
			if n := strings.Count(err.Error(), "/lock"); n != 1 {
				t.Fatalf("%q names the path %d times, want once", err, n)
			}
		})
	}
}
