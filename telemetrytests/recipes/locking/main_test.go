package locking_test

import (
	"context"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/locking"
)

// zkAddr is the package's ZooKeeper server, started by TestMain for every
// test; each test works in a namespace of its own (testkit.Unique).
var zkAddr string

func TestMain(m *testing.M) { testkit.Main(m, &zkAddr) }

// mutexDriver is the mutex's driver (one holder), which the tests drive the
// loop through with no recipe around it.
var mutexDriver = locking.StandardDriver{LockName: "lock-"}

// newLoop returns the loop of a mutex on path.
func newLoop(c *framework.Client, path string) *locking.Loop {
	return locking.New(c, path, mutexDriver)
}

// mustAcquire acquires l, waiting, or fails the test.
func mustAcquire(t *testing.T, l *locking.Loop) *locking.Hold {
	t.Helper()
	h, err := l.Acquire(testkit.Ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if h == nil {
		t.Fatal("acquire returned no hold and no error")
	}
	return h
}

type acquired struct {
	h   *locking.Hold
	err error
}

// acquireAsync acquires l in a goroutine of its own, whose result the
// channel delivers.
func acquireAsync(ctx context.Context, l *locking.Loop) <-chan acquired {
	out := make(chan acquired, 1)
	go func() {
		h, err := l.Acquire(ctx)
		out <- acquired{h, err}
	}()
	return out
}

// await waits for acquireAsync's result.
func await(t *testing.T, ch <-chan acquired) acquired {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-testkit.Ctx(t).Done():
		t.Fatal("acquire did not return")
		return acquired{}
	}
}

// release releases h or fails the test.
func release(t *testing.T, h *locking.Hold) {
	t.Helper()
	if err := h.Release(testkit.Ctx(t)); err != nil {
		t.Fatal(err)
	}
}
