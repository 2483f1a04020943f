package shared_test

import (
	"errors"
	"testing"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/shared"
)

// handle is what Value and Count share, for the lifecycle table.
type handle struct {
	start  func() error
	close  func() error
	get    func() error
	set    func() error
	listen func() (cancel func())
	watch  func() <-chan struct{}
}

func countHandle(t *testing.T, n *shared.Count) handle {
	ctx := testkit.Ctx(t)
	return handle{
		start:  func() error { return n.Start(ctx) },
		close:  n.Close,
		get:    func() error { _, err := n.Get(ctx); return err },
		set:    func() error { return n.Set(ctx, 3) },
		listen: func() func() { return n.Listen(func(int) {}) },
		watch:  func() <-chan struct{} { _, ch := n.Watch(); return ch },
	}
}

func valueHandle(t *testing.T, v *shared.Value) handle {
	ctx := testkit.Ctx(t)
	return handle{
		start:  func() error { return v.Start(ctx) },
		close:  v.Close,
		get:    func() error { _, err := v.Get(ctx); return err },
		set:    func() error { return v.Set(ctx, []byte("x")) },
		listen: func() func() { return v.Listen(func([]byte) {}) },
		watch:  func() <-chan struct{} { _, ch := v.Watch(); return ch },
	}
}

// The lifecycle table of both handle kinds (issue 33's class): a nil
// handle, Close before Start, Start twice, Close twice, Start after Close,
// and use after Close, each with its documented result, and nothing left:
// no server watch, no goroutine (goleak checks the package).
func TestLifecycleTable(t *testing.T) {
	t.Parallel()
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	kinds := map[string]func(path string) handle{
		"count": func(p string) handle { return countHandle(t, shared.NewCount(c, p, 1)) },
		"value": func(p string) handle { return valueHandle(t, shared.NewValue(c, p, []byte("seed"))) },
	}
	nils := map[string]handle{
		"count": countHandle(t, nil),
		"value": valueHandle(t, nil),
	}
	for kind, mk := range kinds {
		t.Run(kind, func(t *testing.T) {
			n := nils[kind]
			if err := n.start(); !errors.Is(err, shared.ErrNilHandle) {
				t.Errorf("nil Start = %v; want ErrNilHandle", err)
			}
			if err := n.get(); !errors.Is(err, shared.ErrNilHandle) {
				t.Errorf("nil Get = %v; want ErrNilHandle", err)
			}
			if err := n.set(); !errors.Is(err, shared.ErrNilHandle) {
				t.Errorf("nil Set = %v; want ErrNilHandle", err)
			}
			if err := n.close(); err != nil {
				t.Errorf("nil Close = %v; want nil", err)
			}
			n.listen()()
			testkit.WaitClosed(t, n.watch(), "a nil handle's Watch channel")

			early := mk("/" + kind + "/early")
			if err := early.close(); err != nil {
				t.Errorf("Close before Start = %v", err)
			}
			if err := early.start(); !errors.Is(err, shared.ErrClosed) {
				t.Errorf("Start after Close = %v; want ErrClosed", err)
			}

			h := mk("/" + kind + "/h")
			for i := 0; i < 2; i++ {
				if err := h.start(); err != nil {
					t.Fatalf("Start %d = %v", i+1, err)
				}
			}
			cancel := h.listen()
			for i := 0; i < 2; i++ {
				if err := h.close(); err != nil {
					t.Errorf("Close %d = %v", i+1, err)
				}
			}
			cancel()
			if err := h.start(); !errors.Is(err, shared.ErrClosed) {
				t.Errorf("Start after Close = %v; want ErrClosed", err)
			}
			// Documented: reads and writes go on after Close.
			if err := h.set(); err != nil {
				t.Errorf("Set after Close = %v", err)
			}
			if err := h.get(); err != nil {
				t.Errorf("Get after Close = %v", err)
			}
			h.listen()() // after Close: does nothing, starts nothing
		})
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, c)
}
