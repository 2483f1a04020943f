package discovery_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/discovery"
)

// A blocked ServiceCache listener holds up nobody: the cache, another
// listener and registrations go on; and it costs at most one waiting list
// however many changes pass: released, it gets the latest list, not one
// call per change. Every listener gets its lists in the order they were
// made (here, growing).
func TestBlockedListenerHoldsNobodyAndCostsOneList(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, ns)
	d := open(t, c, "/services")
	s := d.Cache("orders")
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	type calls struct {
		mu    sync.Mutex
		sizes []int
	}
	record := func(cs *calls, l []discovery.Instance) {
		cs.mu.Lock()
		cs.sizes = append(cs.sizes, len(l))
		cs.mu.Unlock()
	}
	var blocked, fast calls
	gate, entered := make(chan struct{}), make(chan struct{}, 1)
	cancelBlocked := s.Listen(func(l []discovery.Instance) {
		record(&blocked, l)
		select {
		case entered <- struct{}{}:
		default:
		}
		<-gate
	})
	defer cancelBlocked()
	cancelFast := s.Listen(func(l []discovery.Instance) { record(&fast, l) })
	defer cancelFast()

	reg := open(t, testkit.Connect(t, zkAddr, ns), "/services")
	const n = 30
	for k := range n {
		if err := reg.Register(ctx, instance("orders", fmt.Sprintf("i%02d", k), k)); err != nil {
			t.Fatal(err)
		}
		if k == 0 {
			testkit.WaitClosed(t, waitRecv(entered), "the blocked listener's first call")
		}
	}
	testkit.Eventually(t, "the fast listener sees every instance while the other is blocked", func() bool {
		fast.mu.Lock()
		defer fast.mu.Unlock()
		return len(fast.sizes) > 0 && fast.sizes[len(fast.sizes)-1] == n
	})
	if got := len(s.Instances()); got != n {
		t.Fatalf("the cache holds %d instances, want %d", got, n)
	}
	close(gate)
	testkit.Eventually(t, "the blocked listener gets the latest list", func() bool {
		blocked.mu.Lock()
		defer blocked.mu.Unlock()
		return blocked.sizes[len(blocked.sizes)-1] == n
	})
	blocked.mu.Lock()
	got := append([]int(nil), blocked.sizes...)
	blocked.mu.Unlock()
	if len(got) > 2 {
		t.Fatalf("released, the blocked listener was called %d times (%v): a list per change was queued for it", len(got), got)
	}
	for _, cs := range []*calls{&blocked, &fast} {
		cs.mu.Lock()
		// Only registrations happen, so a list of the same size is the
		// same list (a listener handed the latest list at delivery may
		// see it again for the next change); a smaller one is older.
		for k := 1; k < len(cs.sizes); k++ {
			if cs.sizes[k] < cs.sizes[k-1] {
				t.Errorf("lists out of order: sizes %v", cs.sizes)
				break
			}
		}
		cs.mu.Unlock()
	}
}

// waitRecv returns a channel closed once ch has delivered a value.
func waitRecv(ch <-chan struct{}) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		<-ch
		close(done)
	}()
	return done
}
