package queue_test

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/queue"
)

// consumer runs q.Consume in the background with fn (nil: accept every
// item), sends each item it is given on items, and stops at cleanup,
// checking that Consume returned.
type consumer struct {
	items chan queue.Item
	done  chan error
	stop  context.CancelFunc
}

// consumable is a Queue or one of its variants.
type consumable interface {
	Consume(ctx context.Context, fn func(ctx context.Context, it queue.Item) error) error
}

func consume(t *testing.T, q consumable, fn func(ctx context.Context, it queue.Item) error) *consumer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	k := &consumer{items: make(chan queue.Item, 1000), done: make(chan error, 1), stop: cancel}
	go func() {
		k.done <- q.Consume(ctx, func(ctx context.Context, it queue.Item) error {
			k.items <- it
			if fn != nil {
				return fn(ctx, it)
			}
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-k.done:
		case <-time.After(testkit.Deadline):
			t.Error("Consume did not return after its ctx ended")
		}
	})
	return k
}

// next waits for the consumer's next item.
func (k *consumer) next(t *testing.T) queue.Item {
	t.Helper()
	select {
	case it := <-k.items:
		return it
	case err := <-k.done:
		t.Fatalf("Consume returned %v before an item came", err)
	case <-time.After(testkit.Deadline):
		t.Fatal("no item consumed")
	}
	return queue.Item{}
}

// errorSink returns an error handler option and the channel it feeds.
func errorSink() (queue.Option, chan error) {
	ch := make(chan error, 1000)
	return queue.WithErrorHandler(func(err error) {
		select {
		case ch <- err:
		default:
		}
	}), ch
}

// items lists path's children whose name starts with prefix, sorted.
func items(t *testing.T, c *framework.Client, path, prefix string) []string {
	t.Helper()
	var out []string
	for _, n := range testkit.Children(t, c, path) {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}
